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

namespace handoff {

struct heading {
  std::size_t line = 0;         // 1-based line the heading starts on
  unsigned level = 0;           // 1 to 6
  std::size_t title_begin = 0;  // the title, text[title_begin, title_end): not empty, trimmed
  std::size_t title_end = 0;
};

// The headings that start on lines first_line..last_line, in order. The whole text before
// first_line is read too (a fence opened there hides what follows), nothing after last_line.
// One pass: line ends are found 16 bytes at a time, and only lines whose first byte can start a
// heading or a fence are looked at further.
std::vector<heading> find_headings(std::string_view text, std::size_t first_line = 1,
                                   std::size_t last_line = std::numeric_limits<std::size_t>::max());

struct heading_scan {
  std::vector<heading> headings;  // every heading of the text, in order
  std::size_t lines = 1;          // the text's lines, as text_shape counts them
};

// Every heading of `text`, and its lines counted in the same pass (for a projection that needs
// both: measure() would be a second pass over the same bytes).
heading_scan scan_headings(std::string_view text);

}  // namespace handoff
