// find_headings() (engine/text/markdown_headings.hpp): what CommonMark calls a heading, on the line
// it starts on, and what it does not (fenced code, list items, thematic breaks, "#5").
#include <doctest/doctest.h>

#include <algorithm>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "engine/text/markdown_headings.hpp"

using handoff::find_headings;
using handoff::heading;

namespace {

struct seen {
  std::size_t line;
  unsigned level;
  std::string title;
  bool operator==(const seen&) const = default;
};

std::vector<seen> headings_with(handoff::scan_isa isa, std::string_view text, std::size_t first, std::size_t last) {
  std::vector<seen> out;
  for (const heading& h : find_headings(text, first, last, isa)) {
    out.push_back({h.line, h.level, std::string(text.substr(h.title_begin, h.title_end - h.title_begin))});
  }
  return out;
}

// The headings the best scan finds, after checking that the SSE2 scan finds the same.
std::vector<seen> headings_of(std::string_view text, std::size_t first = 1, std::size_t last = 1000000) {
  std::vector<seen> best = headings_with(handoff::scan_isa::best, text, first, last);
  CHECK(headings_with(handoff::scan_isa::sse2, text, first, last) == best);
  return best;
}

}  // namespace

TEST_CASE("ATX headings: levels 1 to 6, indented up to 3 spaces, closing #s and blanks trimmed") {
  const std::string text =
      "# One\n"
      "## Two ##\n"
      "   ### Three   \n"
      "#### Four #not closing\n"
      "##### Five\t#####\t\n"
      "###### Six\r\n"
      "####### seven is not one\n"
      "#5 bolt is not one\n"
      "    # indented 4 is code\n"
      "#\n"
      "## ##\n"
      "#\tTabbed";
  CHECK(headings_of(text) == std::vector<seen>{{1, 1, "One"},
                                               {2, 2, "Two"},
                                               {3, 3, "Three"},
                                               {4, 4, "Four #not closing"},
                                               {5, 5, "Five"},
                                               {6, 6, "Six"},
                                               {12, 1, "Tabbed"}});
}

TEST_CASE("setext headings start on their paragraph's first line, and lists, quotes and breaks make none") {
  const std::string text =
      "Title\n"          // 1
      "=====\n"          // 2
      "\n"               // 3
      "A paragraph\n"    // 4
      "on two lines\n"   // 5
      "---\n"            // 6
      "\n"               // 7
      "---\n"            // 8: a thematic break after a blank line
      "- item\n"         // 9
      "---\n"            // 10: after a list item: a break
      "> quote\n"        // 11
      "===\n"            // 12: not under a paragraph
      "## ATX\n"         // 13
      "Under ATX\n"      // 14
      "  --  \n"         // 15: an underline may be indented and short
      "- item\n"         // 16
      "lazy text\n"      // 17
      "---\n"            // 18: a list item's lazy continuation: no heading
      "text\n"           // 19
      "- - -\n";         // 20: spaces inside: a break, not an underline
  CHECK(headings_of(text) == std::vector<seen>{
                                 {1, 1, "Title"}, {4, 2, "A paragraph"}, {13, 2, "ATX"}, {14, 2, "Under ATX"}});
}

TEST_CASE("nothing inside a fenced code block is a heading, and an unclosed fence runs to the end") {
  const std::string text =
      "# Before\n"        // 1
      "```bash\n"         // 2
      "# a shell comment\n"
      "## not a heading\n"
      "````\n"            // 5: closes (longer is fine)
      "## After\n"        // 6
      "~~~\n"             // 7
      "# inside tildes\n"
      "```\n"             // 9: a ``` does not close a ~~~ fence
      "# still inside\n"
      "~~~~\n"            // 11
      "``` a`b\n"         // 12: a backtick in the info string: not a fence
      "# Real\n"          // 13
      "   ```\n"          // 14: indented 3: opens
      "# hidden\n"
      "    ```\n"         // 16: indented 4: does not close
      "# hidden too\n";
  CHECK(headings_of(text) == std::vector<seen>{{1, 1, "Before"}, {6, 2, "After"}, {13, 1, "Real"}});
}

TEST_CASE("the range: headings on lines first..last, with fences opened before first still hiding") {
  const std::string text = "# A\n```\n# code\n```\n# B\n## C\n```\n# D\n";
  CHECK(headings_of(text, 3, 6) == std::vector<seen>{{5, 1, "B"}, {6, 2, "C"}});
  CHECK(headings_of(text, 6, 8) == std::vector<seen>{{6, 2, "C"}});
  CHECK(headings_of(text, 2, 4).empty());
  CHECK(headings_of(text, 5, 4).empty());
}

TEST_CASE("lines are Pi's: CRLF, a text without a final newline, a heading on the last line, 64-byte blocks") {
  CHECK(headings_of("# A\r\nx\r\n## B\r\n") == std::vector<seen>{{1, 1, "A"}, {3, 2, "B"}});
  CHECK(headings_of("text\n# Last") == std::vector<seen>{{2, 1, "Last"}});
  CHECK(headings_of("").empty());
  // Line ends, indents and underlines on every offset around the 64-byte blocks the scan reads
  // (a block's masks look 2 bytes past it: "- " then a line end is an underline, not a list item).
  for (std::size_t pad = 0; pad < 140; ++pad) {
    CAPTURE(pad);
    const std::string text = std::string(pad, 'x') + "\n# H\n" + std::string(pad, 'y') + "\n\nP\n---";
    CHECK(headings_of(text) == std::vector<seen>{{2, 1, "H"}, {5, 2, "P"}});
    const std::string indented = std::string(pad, 'x') + "\n\n   ## I\nQ\n- \n- not an underline\nR\n  -";
    // "R" continues the list item above it, so the "  -" under it underlines no heading here.
    CHECK(headings_of(indented) == std::vector<seen>{{3, 2, "I"}, {4, 2, "Q"}});
  }
}

TEST_CASE("a text of empty lines: every line counted, and the headings after them on their lines") {
  // 200 KiB of '\n': the scan's per-lane line counters of a chunk full of line ends.
  const std::string text = "# A\n" + std::string(200 * 1024, '\n') + "## B\nend";
  for (const handoff::scan_isa isa : {handoff::scan_isa::best, handoff::scan_isa::sse2}) {
    CAPTURE(static_cast<int>(isa));
    const handoff::heading_scan scan = handoff::scan_headings(text, 1000, isa);
    CHECK(scan.lines == 200 * 1024 + 3);
    REQUIRE(scan.headings.size() == 2);
    CHECK(scan.headings[1].line == 200 * 1024 + 2);
    CHECK(scan.newlines.head.size() == 997);  // "# A\n" and 996 of the '\n'
    CHECK(scan.newlines.tail.size() == 993);  // 992 of the '\n' and "## B\nend"
    const std::vector<heading> found = find_headings(text, 1, std::numeric_limits<std::size_t>::max(), isa);
    REQUIRE(found.size() == 2);
    CHECK(found[1].line == 200 * 1024 + 2);
  }
}

namespace {

// A long text of every kind of line, each group after a blank line, with line lengths drawn so
// that line starts fall on every offset of the 64-byte blocks and the 1 KiB chunks the scan
// reads; `expected` gets the headings the text holds as it is built.
std::string long_markdown(std::vector<seen>& expected, std::size_t groups) {
  std::string text;
  std::size_t line = 1;
  const auto add = [&](const std::string& content) {
    text += content;
    text += '\n';
    ++line;
  };
  for (std::size_t i = 0; i < groups; ++i) {
    const std::string n = std::to_string(i);
    add(std::string(i * 7 % 61, 'x'));  // filler: a paragraph line, or blank
    add("");
    switch (i % 9) {
      case 0: expected.push_back({line, 1, "T" + n}); add("# T" + n); break;
      case 1: expected.push_back({line, 3, "T" + n}); add("   ### T" + n + " ###"); break;
      case 2: add("- item " + n); add("  - nested"); break;
      case 3: expected.push_back({line, 2, "P" + n}); add("P" + n); add("---"); break;
      case 4: add("    # indented code " + n); break;
      case 5: expected.push_back({line, 2, "Q" + n}); add("Q" + n); add("-  "); break;
      case 6: add("```"); add("# hidden " + n); add("- - -"); add("```"); break;
      case 7: expected.push_back({line, 1, "S" + n}); add("S" + n); add("  ===="); break;
      default: add("~~~~ text"); add("## hidden"); add("~~~~"); add("- -x"); break;
    }
  }
  return text;
}

}  // namespace

TEST_CASE("a long text: the same headings, line count and kept line ends with either instruction set") {
  std::vector<seen> expected;
  const std::string text = long_markdown(expected, 600);
  REQUIRE(text.size() > 20 * 1024);
  std::vector<std::size_t> newlines;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\n') newlines.push_back(i);
  }
  for (const handoff::scan_isa isa : {handoff::scan_isa::best, handoff::scan_isa::sse2}) {
    CAPTURE(static_cast<int>(isa));
    // Every cut of the text's end, so that its last lines come in the line-at-a-time rest too.
    for (std::size_t cut = text.size() - 130; cut <= text.size(); ++cut) {
      CAPTURE(cut);
      const std::string_view part(text.data(), cut);
      // Headings whose lines all end in a '\n' of the part: one on its unended last line may be
      // cut short (the short cases above check that line).
      const auto ended_lines = static_cast<std::size_t>(std::count(part.begin(), part.end(), '\n'));
      const auto last_line_of = [](const seen& s) { return s.line + (s.title[0] == 'T' ? 0 : 1); };
      std::vector<seen> want;
      for (const seen& s : expected) {
        if (last_line_of(s) <= ended_lines) want.push_back(s);
      }
      const handoff::heading_scan scan = handoff::scan_headings(part, 4096, isa);
      std::vector<seen> got;
      for (const heading& h : scan.headings) {
        seen s{h.line, h.level, std::string(part.substr(h.title_begin, h.title_end - h.title_begin))};
        if (last_line_of(s) <= ended_lines) got.push_back(s);
      }
      CHECK(got == want);
      CHECK(scan.lines == ended_lines + 1);
      std::vector<std::size_t> head;
      std::vector<std::size_t> tail;
      for (const std::size_t at : newlines) {
        if (at < 4096 && at < cut) head.push_back(at);
        if (at >= cut - 4096 && at < cut) tail.push_back(at);
      }
      CHECK(scan.newlines.head == head);
      CHECK(scan.newlines.tail == tail);
      CHECK(handoff::find_headings(part, 1, std::numeric_limits<std::size_t>::max(), isa).size() ==
            scan.headings.size());
    }
  }
}
