// A page of a text by lines, the way Pi's `read` tool pages a file (used by artifact/read).
//
// Lines are text.split("\n"), 1-based. The page starts at `offset` and holds at most `limit`
// lines, then is cut head-first like Pi's truncateHead at 2000 lines / 50 KiB (whole lines only).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace handoff {

inline constexpr std::size_t read_max_lines = 2000;       // Pi's DEFAULT_MAX_LINES
inline constexpr std::size_t read_max_bytes = 50 * 1024;  // Pi's DEFAULT_MAX_BYTES

struct page_request {
  std::size_t offset = 1;               // first line, 1-based
  std::optional<std::size_t> limit;     // max lines; none = to the end (still capped)
};

struct text_page {
  std::string text;               // the lines, joined with "\n", no trailing newline added
  std::size_t first_line = 0;     // 1-based line number of the first line in `text`
  std::size_t last_line = 0;      // 1-based line number of the last line in `text`;
                                  // first_line - 1 when it holds none (limit 0)
  std::size_t total_lines = 0;    // lines in the whole text
  bool cut = false;               // stopped by the 2000-line / 50 KiB cap before `limit`
  // Line first_line alone is longer than 50 KiB and `text` holds only its first 50 KiB (cut at
  // a character boundary). Pi's read shows nothing then and points to
  // `sed -n 'Np' FILE | head -c 51200`; this returns that prefix directly.
  bool partial_line = false;
  std::optional<std::size_t> next_offset;  // where to continue, when lines remain
};

// Throws std::out_of_range with Pi's message "Offset X is beyond end of file (T lines total)"
// when offset is 0 or past the last line.
text_page read_page(std::string_view text, const page_request& request);

}  // namespace handoff
