#include "runtime/heap_reuse.hpp"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace handoff::daemon {

void keep_freed_heap() noexcept {
#if defined(__GLIBC__)
  // A refusal (an out-of-range value) leaves glibc's defaults: slower, not wrong.
  (void)mallopt(M_MMAP_THRESHOLD, static_cast<int>(heap_mmap_threshold_bytes));
  (void)mallopt(M_TRIM_THRESHOLD, static_cast<int>(heap_keep_bytes));
#endif
}

}  // namespace handoff::daemon
