// What the parent gets when handoffd did not bound a result (none could be reached or started
// within the hook's budget, it refused, or it answered no section): still its head AND its tail,
// cut here by the engine's projection within the caps handoffd would use for that reader, then
// one line saying handoffd did not bound it and where the full text is. The verdict at the end
// of a long answer is never lost, and neither is the answer: the full text is in a file the
// harness's own read tool reaches.
//
// That file is never in the artifact store, which handoffd alone owns (docs/design.md §7): it is
// the harness's own saved copy where it has one (opencode's tool-output file), else a private
// copy the hook writes in unbounded_dir() (or, for Gemini CLI, in the project temp dir its
// read_file reads). The daemon never lists, serves or collects those files.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "engine/text/reader_profile.hpp"

namespace handoff::cli::hook_core {

// ${XDG_CACHE_HOME:-$HOME/.cache}/handoff/unbounded: beside the default store, never in it.
// Empty when neither variable is set.
std::filesystem::path unbounded_dir();

// Writes `text` as <dir>/<sha256 of text>.txt: mode 0600 in a 0700 directory of ours (created
// where missing), published atomically, never through a symlink at the directory or the file
// (engine/fs/private_dir.hpp, atomic_file.hpp). Returns its path. Throws std::runtime_error
// saying what went wrong.
std::filesystem::path write_private_copy(const std::filesystem::path& dir, std::string_view text);

// write_private_copy(unbounded_dir(), text), after taking out the copies there that nothing wrote
// or rewrote for unbounded_keep (regular files named <64 hex>.txt only, never through a symlink;
// a failure to take one out is ignored): the directory holds what recent fallbacks named.
inline constexpr std::chrono::hours unbounded_keep{24 * 30};
std::filesystem::path keep_unbounded_copy(std::string_view text);

// `why` as one line: control characters as spaces, at most `most` bytes (cut on a UTF-8
// character boundary, "..." added).
std::string one_line(std::string_view why, std::size_t most = 160);

// The head and tail of `full` (which does not fit_alone()), its footer naming `full_path` (which
// must hold exactly `full`) with `reader`'s calls, then "\n\n" and the one line:
// "[handoff: WHY; the head and tail above were cut by the hook itself, the full text (N bytes)
// is in PATH]"; the whole within the reader's wait caps (framed_caps(surface_caps::wait(),
// reader)), and within `most_bytes` when that is less (a share of a batch). `why`:
// why_not_bounded(). Throws std::invalid_argument when the caps cannot hold the marker, footer
// and line (a path of several KiB, a share of a few hundred bytes).
std::string local_head_tail(std::string_view full, const reader_profile& reader,
                            const std::filesystem::path& full_path, std::string_view why,
                            std::size_t most_bytes = SIZE_MAX);

// The one line alone, for a result that passes whole (it fits, or no copy could be written):
// "[handoff: WHY; the result passes whole]".
std::string passes_whole_line(std::string_view why);

}  // namespace handoff::cli::hook_core
