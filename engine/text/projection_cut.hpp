// Where a projection cuts a text that does not fit: which prefix it shows as the head and
// which suffix as the tail, inside a byte and line budget for the two together.
#pragma once

#include <cstddef>
#include <string_view>

#include "engine/text/newline_index.hpp"

namespace handoff {

// Output the head and tail may take together. In the projection every shown line, whole or
// partial, is followed by one '\n', so a line costs its bytes + 1 and one line.
struct body_budget {
  std::size_t bytes = 0;
  std::size_t lines = 0;
};

// The head is text[0, head_end), the tail text[tail_start, size). They never meet: at least
// one line, counting partly shown ones, is omitted between them.
struct body_cut {
  std::size_t head_end = 0;
  std::size_t head_lines = 0;  // whole lines at the head: 1..head_lines
  bool head_partial = false;   // the head ends inside line head_lines + 1
  std::size_t tail_start = 0;
  std::size_t tail_lines = 0;  // whole lines at the tail: the last tail_lines lines
  bool tail_partial = false;   // the tail starts inside line total_lines - tail_lines
};

// Cuts `text` of `total_lines` lines (count of '\n' + 1). Precondition: the whole text does not
// fit the budget, i.e. text.size() + 1 > budget.bytes or total_lines > budget.lines, and
// budget.lines >= 2.
//
// The head gets `head_share` of the budget (bytes and lines), the tail the rest. Each side
// first takes whole lines within its share; budget the head leaves goes to the tail, and what
// the tail then leaves goes back to the head. A side cuts inside a line only when that line
// alone is longer than its byte share, at a UTF-8 character boundary.
//
// Looks only at the bytes it can show (memchr/memrchr from both ends), never at the middle;
// `newlines`, when given, holds the '\n' bytes of at least the budget's bytes at each end, and
// is asked instead.
body_cut cut_body(std::string_view text, std::size_t total_lines, body_budget budget, double head_share,
                  const newline_index* newlines = nullptr);

}  // namespace handoff
