// The section headings of a markdown text, as CommonMark finds them, for the outline of a
// projection's omitted middle (outline.hpp) and `handoff read --outline`.
//
// A heading is
//   - ATX: up to 3 spaces, 1 to 6 '#', then a space, a tab or the line's end ("#5" is not one);
//     its title is the rest, trimmed, without a closing run of '#' that follows a space;
//   - setext: a paragraph line followed by a line of only '=' (level 1) or only '-' (level 2),
//     each indented by up to 3 spaces and followed by nothing but spaces. The heading starts on
//     the paragraph's first line, which is its title. A paragraph line is one that is not
//     blank, not indented by 4 or more, and starts no other block (heading, fence, list item,
//     block quote, thematic break); a paragraph that continues a list item or a quote makes
//     no heading.
// Nothing between an opening fence (up to 3 spaces, then 3 or more '`' or '~'; a '`' fence's
// info string holds no '`') and its closing fence (the same character, at least as many, then
// only spaces) is a heading; a fence never closed runs to the text's end. Headings with an empty
// title are not counted: there is nothing to find them by. Block quotes, lists and HTML blocks
// are not looked into.
//
// Lines are numbered as Pi's `read` numbers them: text.split("\n"), 1-based. A '\r' before a
// line's '\n' is trailing space.
#pragma once

#include <cstddef>
#include <limits>
#include <string_view>
#include <vector>

#include "engine/text/newline_index.hpp"

namespace handoff {

struct heading {
  std::size_t line = 0;         // 1-based line the heading starts on
  unsigned level = 0;           // 1 to 6
  std::size_t title_begin = 0;  // the title, text[title_begin, title_end): not empty, trimmed
  std::size_t title_end = 0;
};

// The instructions the scan finds line ends with: the best the CPU has (AVX2), or the x86-64
// baseline (SSE2) even where AVX2 is there, for tests that compare the two. Same result.
enum class scan_isa { best, sse2 };

// The headings that start on lines first_line..last_line, in order. The whole text before
// first_line is read too (a fence opened there hides what follows), nothing after last_line.
// One pass: line ends are found 64 bytes at a time, and only lines that can start a heading or a
// fence are looked at further.
std::vector<heading> find_headings(std::string_view text, std::size_t first_line = 1,
                                   std::size_t last_line = std::numeric_limits<std::size_t>::max(),
                                   scan_isa isa = scan_isa::best);

struct heading_scan {
  std::vector<heading> headings;  // every heading of the text, in order
  std::size_t lines = 1;          // the text's lines, as text_shape counts them
  newline_index newlines;         // the '\n' bytes of its first and last edge_bytes
};

// Every heading of `text`, its lines counted and the '\n' bytes of its first and last
// `edge_bytes` kept, in the same pass (for a projection, which needs all three: measure() and a
// memchr per line of the head and the tail would read the same bytes again).
heading_scan scan_headings(std::string_view text, std::size_t edge_bytes = 0, scan_isa isa = scan_isa::best);

}  // namespace handoff
