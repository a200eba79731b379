// subagent/check previews: the tail of a text, at most 2 KiB and 20 lines (OpenPI's numbers),
// cut on a UTF-8 boundary.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace handoff::daemon {

inline constexpr std::size_t preview_max_bytes = 2048;  // bytes of a check preview
inline constexpr std::size_t preview_max_lines = 20;    // lines of a check preview

struct preview {
  std::string text;
  bool truncated = false;  // the text was longer than the preview
};

// The last <= 20 lines / 2 KiB of `text`.
preview make_preview(std::string_view text);

// Appends one activity text to a running child's progress log, keeping only what a preview
// can show (so a chatty child costs at most ~2 KiB of memory).
void append_progress(std::string& log, std::string_view text);

}  // namespace handoff::daemon
