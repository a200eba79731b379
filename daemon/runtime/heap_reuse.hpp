// The daemon's malloc policy: keep freed memory for the next large message instead of handing
// it back to the kernel after each one.
//
// Why: a 1 MiB `subagent/completed` allocates several megabytes on the I/O thread (the frame
// buffer, the parsed finalText, the request), all freed once it is answered. glibc's defaults
// return them to the kernel (trim above 2x the largest freed chunk, mmap above it), so the next
// request touches fresh pages again: a page fault and a zeroed page per 4 KiB, which costs more
// than parsing the same megabyte (docs/benchmarks.md, "Figures behind the code").
#pragma once

#include <cstddef>

namespace handoff::daemon {

// Allocations below this come from the heap (and are reused); larger ones are mmap'ed and
// returned at free as before. 8 MiB: a message of up to ~4 MiB (its buffer doubles) is served
// from reused memory.
inline constexpr std::size_t heap_mmap_threshold_bytes = 8 * 1024 * 1024;
// Free memory at the top of the heap kept rather than trimmed: at most this much stays resident
// after a burst of large messages (the memory benchmark's budget is 64 MiB).
inline constexpr std::size_t heap_keep_bytes = 16 * 1024 * 1024;

// Sets both thresholds (which also stops glibc's dynamic adjustment of them). Call once, first
// thing in main, before any thread starts. Does nothing where mallopt is not glibc's.
void keep_freed_heap() noexcept;

}  // namespace handoff::daemon
