// Pages of a text by lines, the way Pi 1.6.0's `read` tool pages a file.
//
// Lines are text.split("\n"), 1-based. read_page() is one `read` call (used by artifact/read and
// `handoff read`): the page starts at `offset` and holds at most `limit` lines, then is cut
// head-first like Pi's truncateHead at 2000 lines / 50 KiB (whole lines only).
//
// read_plan is the other direction (used by the projection's footer and `handoff read --plan`):
// the calls that read a run of lines back with nothing cut and nothing refused. Pi's read of
// lines a..b is uncut exactly when the lines joined with "\n" are at most 50 KiB (UTF-8 bytes,
// as Node's Buffer.byteLength counts them) and at most 2000 lines; a line over 50 KiB is always
// refused, so it is read instead as byte ranges of at most 50 KiB through Pi's `bash` tool, whose
// output is shown uncut up to the same 50 KiB and 2000 lines (such a range holds no newline).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "engine/text/reader_profile.hpp"

namespace handoff {

inline constexpr std::size_t read_max_lines = pi_reader.page_lines;  // Pi's DEFAULT_MAX_LINES
inline constexpr std::size_t read_max_bytes = pi_reader.page_bytes;  // Pi's DEFAULT_MAX_BYTES

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

// One call of a read_plan: Pi `read` with offset=first_line limit=last_line-first_line+1, or,
// when `bytes`, the byte range [first_byte, end_byte) of line first_line (== last_line), a line
// over 50 KiB, printed by `handoff read --bytes first_byte-end_byte FILE`.
struct read_step {
  std::size_t first_line = 0;  // 1-based
  std::size_t last_line = 0;   // 1-based, >= first_line
  bool bytes = false;          // a byte range of one line too long for Pi's read
  std::size_t first_byte = 0;  // the step's bytes in the text, [first_byte, end_byte), the '\n'
  std::size_t end_byte = 0;    // after a run of lines excluded; a byte range is 1..50 KiB long
                               // and starts and ends at character boundaries
};

// The calls that read lines first_line..last_line of a text back, in order, each returning
// exactly its lines (or bytes) uncut in Pi 1.6.0. Greedy: each `read` takes as many whole lines
// as one page holds (at most 2000 lines and 50 KiB joined), so no plan of whole pages is shorter.
// A line over 50 KiB becomes consecutive byte ranges of at most 50 KiB, cut at character
// boundaries, that together are that line. Each call looks at one page of bytes at most (memchr).
// The pages are those of `profile` (reader_profile.hpp): Pi's by default, Claude Code's smaller
// ones (a line then counts its number prefix, and a line the page cannot hold is read in byte
// ranges of at most page_bytes through Claude Code's Bash).
class read_plan {
 public:
  // Throws std::out_of_range when the lines are not 1 <= first_line <= last_line <= the text's.
  read_plan(std::string_view text, std::size_t first_line, std::size_t last_line,
            const reader_profile& profile = pi_reader);
  // Same, starting at `first_byte`, where the caller knows line first_line starts; unchecked.
  read_plan(std::string_view text, std::size_t first_line, std::size_t first_byte,
            std::size_t last_line, const reader_profile& profile = pi_reader) noexcept;

  // The next call, or none when the lines are all read.
  std::optional<read_step> next() noexcept;

 private:
  // End of the line starting at `start` (its '\n' or the text's end) when the line is at most
  // max_bytes long, else npos; looks at max_bytes + 1 bytes at most.
  std::size_t end_within(std::size_t start, std::size_t max_bytes) const noexcept;

  std::string_view text_;
  const reader_profile* profile_;
  std::size_t line_;             // the next line to read
  std::size_t pos_;              // where it starts, or where the long line's next range starts
  std::size_t last_line_;
  bool in_long_line_ = false;    // line_ is over 50 KiB and being read in byte ranges
};

}  // namespace handoff
