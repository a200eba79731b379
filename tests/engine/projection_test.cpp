// The projection (docs/design.md §3; engine/text/projection.cpp): each rule of that section and
// the edge cases, each read back from the projection's text by projection_checks.hpp.
#include "engine/text/projection.hpp"

#include <doctest/doctest.h>

#include <cstdio>
#include <stdexcept>
#include <string>

#include "engine/text/text_page.hpp"
#include "utf8.hpp"
#include "projection_checks.hpp"

using handoff::artifact_ref;
using handoff::fits;
using handoff::project;
using handoff::projection;
using handoff::projection_limits;
using namespace handoff::test;

namespace {

const std::string seed_sha = "5f70bf18a086007016e948b04aed3b82103a36bea41755b6cddfaf10ace3c6ef";
const artifact_ref seed_saved{true, "/home/user/.pi/agent/cache/openpi/subagent-results/" + seed_sha + ".txt",
                              seed_sha, ""};
const artifact_ref seed_unsaved{false, "", seed_sha, "open /home/user/.pi/agent/cache: Permission denied"};

// The seed's real smoke test: BEGIN, 420 numbered lines 0001..0420, END; 36,997 bytes and
// 422 lines, no final newline.
std::string seed_report() {
  std::string text = "BEGIN\n";
  for (int i = 1; i <= 420; ++i) {
    char number[8];
    std::snprintf(number, sizeof number, "%04d", i);
    std::string line = std::string(number) + " evidence line of the long subagent report ";
    line.resize(i <= 28 ? 88 : 87, '.');  // 28 * 89 + 392 * 88 bytes with the newlines
    text += line + "\n";
  }
  return text + "END";
}

std::string numbered_lines(std::size_t count, std::size_t width) {
  std::string text;
  for (std::size_t i = 1; i <= count; ++i) {
    std::string line = "line " + std::to_string(i) + " ";
    line.resize(width, '-');
    text += line + "\n";
  }
  return text;
}

bool has_substring(std::string_view haystack, std::string_view needle) {
  return haystack.find(needle) != std::string_view::npos;
}

}  // namespace

TEST_CASE("the seed's 36,997-byte report keeps BEGIN and END under 16 KiB") {
  const std::string text = seed_report();
  REQUIRE(text.size() == 36997);
  REQUIRE(split_lines(text).size() == 422);
  const projection_limits limits{16384, 600, 0.75};
  const projection p = project(text, limits, seed_saved);
  const omitted_range omitted = check_cut(text, limits, seed_saved, p);
  CHECK(p.text.substr(0, 6) == "BEGIN\n");
  CHECK(has_substring(p.text, "\nEND\n[Truncated: "));
  CHECK(has_substring(p.text, "[... middle omitted: lines "));
  CHECK(has_substring(p.text, "[Truncated: 36,997 bytes / 422 lines in full; shown: lines 1-"));
  CHECK(has_substring(p.text, seed_saved.path));
  // About 3/4 of the body is head: line 0130 is well inside it, line 0400 inside the tail.
  CHECK(has_substring(p.text, "\n0130 evidence"));
  CHECK(has_substring(p.text, "\n0400 evidence"));
  CHECK(p.head_bytes > 3 * p.tail_bytes - 1000);
  CHECK(p.head_bytes < 3 * p.tail_bytes + 1000);
  CHECK(p.text.size() > 16384 - 200);  // the reserve for the notices is tight
  // One page of Pi's read holds the omitted middle, and the footer says so.
  CHECK(omitted.first == p.head_lines + 1);
  CHECK(omitted.last == 422 - p.tail_lines);
  CHECK(has_substring(p.text, " in 1 call, each shown whole: read offset=" + std::to_string(omitted.first) +
                             " limit=" + std::to_string(omitted.last - omitted.first + 1) + ".]"));
}

TEST_CASE("a text within both limits comes back byte for byte") {
  const projection_limits limits{1000, 10, 0.75};
  for (const std::string& text : {std::string(), std::string("one line"), std::string("a\nb\n"),
                                  std::string("\r\nCRLF\r\n"), numbered_lines(9, 20)}) {
    CAPTURE(text);
    CHECK(fits(text, limits));
    const projection p = project(text, limits, seed_saved);
    CHECK(p.text == text);
    CHECK_FALSE(p.truncated);
    CHECK(p.omitted_count == 0);
    CHECK(p.total.bytes == text.size());
  }
}

TEST_CASE("a given shape that cannot be the text's is not used") {
  std::string text;
  for (int i = 0; i < 10; ++i) text += "line " + std::to_string(i) + "\n";
  const projection_limits limits{16384, 600, 0.75};
  // Another byte count, or more lines than bytes + 1: measured, so the text fits as it is.
  CHECK(project(text, limits, artifact_ref{}, {text.size() + 1, 5000}).text == text);
  CHECK(project(text, limits, artifact_ref{}, {text.size(), text.size() + 2}).text == text);
  // A plausible count it does not have, over the line cap (50 lines in its 70 bytes, against
  // 20): a cut of its 11 real lines would need head and tail to overlap, so the text is counted
  // after all and comes back whole.
  const projection p = project(text, {16384, 20, 0.75}, artifact_ref{}, {text.size(), 50});
  CHECK_FALSE(p.truncated);
  CHECK(p.text == text);
  CHECK(p.total.lines == 11);
}

TEST_CASE("exactly at the limits is verbatim, one byte or one line over is cut") {
  const std::string at_limit = numbered_lines(9, 99) + std::string(99, 'z');  // 10 lines, 999 B
  REQUIRE(at_limit.size() == 999);
  const projection_limits limits{999, 10, 0.75};
  CHECK(fits(at_limit, limits));
  CHECK(project(at_limit, limits, seed_saved).text == at_limit);

  const std::string byte_over = at_limit + "z";
  CHECK_FALSE(fits(byte_over, {999, 10, 0.75}));
  const projection_limits tight_bytes{999, 10, 0.75};
  check_cut(byte_over, tight_bytes, seed_unsaved, project(byte_over, tight_bytes, seed_unsaved));

  const std::string line_over = at_limit + "\n";  // 11 lines by Pi's split
  const projection_limits roomy_bytes{5000, 10, 0.75};
  CHECK_FALSE(fits(line_over, roomy_bytes));
  const projection p = project(line_over, roomy_bytes, seed_unsaved);
  check_cut(line_over, roomy_bytes, seed_unsaved, p);
  CHECK(split_lines(p.text).size() <= 10);
}

TEST_CASE("the line cap keeps a recognisable head and tail when bytes are no problem") {
  const std::string text = numbered_lines(5000, 30);
  const projection_limits limits{1 << 20, 600, 0.75};
  const projection p = project(text, limits, seed_saved);
  check_cut(text, limits, seed_saved, p);
  CHECK(p.text.substr(0, 7) == "line 1 ");
  CHECK(has_substring(p.text, "\nline 5000 "));
  CHECK(p.text.size() < 600 * 32);
  // The body has 600 - 3 lines: 448 (75%) for the head, 149 for the tail, which also shows
  // the empty line after the final '\n' for free.
  CHECK(p.head_lines == 448);
  CHECK(p.tail_lines == 150);
}

TEST_CASE("the byte cap binds while the line cap does not, and vice versa") {
  const std::string wide = numbered_lines(100, 400);  // 40 KB, 101 lines
  const projection_limits by_bytes{8192, 600, 0.75};
  const projection a = project(wide, by_bytes, seed_saved);
  check_cut(wide, by_bytes, seed_saved, a);
  CHECK(split_lines(a.text).size() < 40);

  const std::string narrow = numbered_lines(1000, 8);  // 9 KB, 1001 lines
  const projection_limits by_lines{16384, 50, 0.75};
  const projection b = project(narrow, by_lines, seed_saved);
  check_cut(narrow, by_lines, seed_saved, b);
  CHECK(split_lines(b.text).size() == 50);
  CHECK(b.text.size() < 1000);
}

TEST_CASE("a single enormous line is cut inside at both ends and read back in byte ranges") {
  std::string text;
  for (int i = 0; text.size() < 200000; ++i) text += "word" + std::to_string(i) + " ";
  const projection_limits limits{16384, 600, 0.75};
  const projection p = project(text, limits, seed_saved);
  const omitted_range omitted = check_cut(text, limits, seed_saved, p);
  CHECK(omitted.first == 1);
  CHECK(omitted.last == 1);
  CHECK(p.head_partial);
  CHECK(p.tail_partial);
  CHECK(p.head_lines == 0);
  CHECK(p.tail_lines == 0);
  CHECK(has_substring(p.text, "shown: start of line 1, end of line 1."));
  // Pi refuses a read of a line over 50 KiB: the footer gives no `read` call for it.
  CHECK_FALSE(has_substring(p.text, "offset="));
  CHECK(has_substring(p.text, "omitted line 1 in 4 calls, each shown whole: bash `'handoff' read --bytes 0-51200 '" +
                             seed_saved.path + "'`; bash `'handoff' read --bytes 51200-102400 '"));
  CHECK(p.head_bytes > 2 * p.tail_bytes);  // 75/25 holds inside the line too

  // Under 4 KiB the four commands do not fit beside the text: the plan command stands for them.
  const projection_limits small{4096, 600, 0.75};
  const projection q = project(text, small, seed_saved);
  check_cut(text, small, seed_saved, q);
  CHECK(has_substring(q.text, "Full text saved; bash `'handoff' read --plan 1-1 '" + seed_saved.path +
                             "'` lists the calls that read the omitted line 1 back, each shown whole.]"));
}

TEST_CASE("a long line in the middle is cut inside while whole lines frame it") {
  const std::string text =
      numbered_lines(20, 40) + std::string(100000, 'x') + "\n" + numbered_lines(20, 40);
  const projection_limits limits{4096, 600, 0.75};
  const projection p = project(text, limits, seed_saved);
  const omitted_range omitted = check_cut(text, limits, seed_saved, p);
  CHECK(p.head_lines == 20);
  CHECK(p.tail_lines == 21);  // the 20 lines and the empty one after the final '\n'
  CHECK(omitted.first == 21);
  CHECK(omitted.last == 21);
  CHECK(p.head_partial);
}

TEST_CASE("text made only of newlines") {
  const std::string text(3000, '\n');
  const projection_limits limits{16384, 100, 0.75};
  const projection p = project(text, limits, seed_saved);
  check_cut(text, limits, seed_saved, p);
  CHECK(p.total.lines == 3001);
  CHECK(p.head_lines + p.tail_lines == 100 - 3 + 1);  // the last empty line is free
}

TEST_CASE("a trailing newline is kept as the last, empty, line") {
  const std::string without = numbered_lines(300, 60) + "the last words";
  const std::string with = without + "\n";
  const projection_limits limits{4096, 600, 0.75};
  const projection a = project(without, limits, seed_saved);
  const projection b = project(with, limits, seed_saved);
  check_cut(without, limits, seed_saved, a);
  check_cut(with, limits, seed_saved, b);
  // The final '\n' ends the tail's last line; the empty line after it is where the footer starts.
  CHECK(has_substring(a.text, "\nthe last words\n[Truncated: "));
  CHECK(has_substring(b.text, "\nthe last words\n[Truncated: "));
  CHECK(b.total.lines == a.total.lines + 1);
  CHECK(b.tail_lines == a.tail_lines + 1);
  CHECK(b.text.size() == a.text.size());
}

TEST_CASE("a final newline does not take the tail's only line from the last line with content") {
  // With 8 lines, the tail's share is one line: before, it went to the empty string after the
  // final '\n' and the last words were lost.
  const std::string text = numbered_lines(300, 60) + "the last words\n";
  const projection_limits limits{4096, 8, 0.75};
  const projection p = project(text, limits, seed_saved);
  check_cut(text, limits, seed_saved, p);
  CHECK(has_substring(p.text, "\nthe last words\n[Truncated: "));
  CHECK(p.tail_lines == 2);
  CHECK(split_lines(p.text).size() <= 8);

  // Only empty lines at the end: the tail shows the last of them that holds anything.
  const std::string blank_end = numbered_lines(300, 60) + "\n\n";
  const projection q = project(blank_end, limits, seed_saved);
  check_cut(blank_end, limits, seed_saved, q);
  CHECK(q.tail_lines >= 2);
}

TEST_CASE("CRLF text is cut on its '\\n' and keeps its '\\r'") {
  std::string text;
  for (int i = 0; i < 500; ++i) text += "windows line " + std::to_string(i) + "\r\n";
  const projection_limits limits{2048, 600, 0.75};
  const projection p = project(text, limits, seed_saved);
  check_cut(text, limits, seed_saved, p);
  CHECK(p.text.substr(0, 16) == "windows line 0\r\n");
  CHECK(has_substring(p.text, "windows line 499\r\n[Truncated: "));
}

TEST_CASE("CJK and emoji survive a cut at every byte position") {
  const std::string cjk = "\xE6\xB1\x89\xE5\xAD\x97";  // 汉字, 3 bytes each
  const std::string emoji = "\xF0\x9F\x98\x80";        // 😀, 4 bytes
  for (const std::string& unit : {cjk, emoji}) {
    for (std::size_t shift = 0; shift < 4; ++shift) {
      std::string line(shift, 'a');
      while (line.size() < 30000) line += unit;
      for (const std::string& text : {line, line + "\n" + line, "short\n" + line + "\nend"}) {
        for (std::size_t max_bytes = 600; max_bytes < 616; ++max_bytes) {
          CAPTURE(shift);
          CAPTURE(max_bytes);
          const projection_limits limits{max_bytes, 600, 0.75};
          const projection p = project(text, limits, seed_saved);
          check_cut(text, limits, seed_saved, p);
          CHECK(handoff::valid_utf8(p.text));
        }
      }
    }
  }
}

TEST_CASE("head share moves the body between head and tail") {
  const std::string text = numbered_lines(2000, 50);
  for (const double share : {0.05, 0.4, 0.75, 0.95}) {
    CAPTURE(share);
    const projection_limits limits{16384, 600, share};
    const projection p = project(text, limits, seed_saved);
    check_cut(text, limits, seed_saved, p);
    const double head = static_cast<double>(p.head_bytes);
    const double body = head + static_cast<double>(p.tail_bytes);
    CHECK(head / body > share - 0.02);
    CHECK(head / body < share + 0.02);
  }
}

TEST_CASE("budget a side cannot use goes to the other side") {
  // The head's lines are 5 KB each, so under 4 KiB it shows one cut line and leaves
  // nothing; the tail's lines are short, and the tail takes what the head's share left.
  std::string text;
  for (int i = 0; i < 10; ++i) text += std::string(5000, static_cast<char>('a' + i)) + "\n";
  text += numbered_lines(500, 20);
  const projection_limits limits{4096, 600, 0.75};
  const projection p = project(text, limits, seed_saved);
  check_cut(text, limits, seed_saved, p);
  CHECK(p.head_partial);
  CHECK(p.head_lines == 0);

  // Whole head lines that stop short of the head's share hand the rest to the tail.
  const std::string lumpy =
      std::string(2000, 'h') + "\n" + std::string(2000, 'i') + "\n" + numbered_lines(400, 20);
  const projection q = project(lumpy, limits, seed_saved);
  check_cut(lumpy, limits, seed_saved, q);
  CHECK(q.head_lines == 1);
  CHECK_FALSE(q.head_partial);  // line 2 is shorter than the head's share: not cut inside
  CHECK(q.tail_bytes + 400 >= q.head_bytes);

  // And back: the tail's second line (701 bytes of output) does not fit what is left of its
  // ~950-byte share after the last line, nor is it longer than the share, so the tail stops
  // at one line and the head takes the rest.
  const std::string heavy_end =
      numbered_lines(500, 20) + std::string(700, 'y') + "\n" + std::string(300, 'z');
  const projection r = project(heavy_end, limits, seed_saved);
  check_cut(heavy_end, limits, seed_saved, r);
  CHECK(r.tail_lines == 1);
  CHECK_FALSE(r.tail_partial);
  CHECK(r.head_bytes > 3300);  // its own share is about 2,850 bytes
}

TEST_CASE("the footer names the path and the exact read call") {
  const std::string text = numbered_lines(1000, 40);
  const projection_limits limits{8192, 600, 0.75};
  const projection p = project(text, limits, seed_saved);
  const omitted_range omitted = check_cut(text, limits, seed_saved, p);
  CHECK(has_substring(p.text, "[Truncated: 41,000 bytes / 1001 lines in full; shown: lines 1-"));
  const std::string expected = "Full text: " + seed_saved.path + " \xE2\x80\x94 omitted lines " +
                               std::to_string(omitted.first) + "-" + std::to_string(omitted.last) +
                               " in 1 call, each shown whole: read offset=" + std::to_string(p.omitted_first) +
                               " limit=" + std::to_string(p.omitted_count) + ".]";
  CHECK(ends_with(p.text, expected));
}

TEST_CASE("omitted lines over one page of Pi's read are named page by page") {
  // 171 KB of 3,000 lines of 57 bytes: 898 lines fill a 50 KiB page.
  const std::string text = numbered_lines(3000, 56);
  const projection_limits limits{16384, 600, 0.75};
  const projection p = project(text, limits, seed_saved);
  const omitted_range omitted = check_cut(text, limits, seed_saved, p);
  const std::string first_call = "read offset=" + std::to_string(omitted.first) + " limit=898; read offset=" +
                                 std::to_string(omitted.first + 898) + " limit=898; ";
  CHECK(has_substring(p.text, " in 4 calls, each shown whole: " + first_call));

  // More than 2000 short lines: pages of 2000 lines.
  const std::string short_lines = numbered_lines(9000, 9);
  const projection q = project(short_lines, limits, seed_saved);
  const omitted_range o = check_cut(short_lines, limits, seed_saved, q);
  CHECK(has_substring(q.text, "read offset=" + std::to_string(o.first) + " limit=2000; read offset=" +
                             std::to_string(o.first + 2000) + " limit=2000; "));
}

TEST_CASE("past eight calls the footer names the command that lists them") {
  const std::string text = numbered_lines(20000, 59);  // 1.2 MB: about 24 pages
  const projection_limits limits{16384, 600, 0.75};
  const projection p = project(text, limits, seed_saved);
  const omitted_range omitted = check_cut(text, limits, seed_saved, p);
  const std::string range = std::to_string(omitted.first) + "-" + std::to_string(omitted.last);
  CHECK(has_substring(p.text, "Full text saved; bash `'handoff' read --plan " + range + " '" + seed_saved.path +
                             "'` lists the calls that read the omitted lines " + range + " back, each shown whole.]"));
}

TEST_CASE("an unsaved artifact is reported honestly and no path is shown") {
  const std::string text = numbered_lines(1000, 40);
  const projection_limits limits{8192, 600, 0.75};
  const artifact_ref failed{false, "/must/not/appear.txt", seed_sha, "No space left on device"};
  const projection p = project(text, limits, failed);
  check_cut(text, limits, failed, p);
  CHECK(has_substring(p.text, "Full text NOT saved (No space left on device); the omitted lines "));
  CHECK_FALSE(has_substring(p.text, "/must/not/appear"));
  CHECK_FALSE(has_substring(p.text, "offset="));
  CHECK(has_substring(p.text, "cannot be read back.]"));
}

TEST_CASE("an unsaved artifact's reason is one bounded line") {
  const std::string text = numbered_lines(1000, 40);
  const projection_limits limits{8192, 600, 0.75};
  const artifact_ref multi_line{false, "", seed_sha, "first\nsecond\r\nthird"};
  const projection a = project(text, limits, multi_line);
  check_cut(text, limits, multi_line, a);
  CHECK(has_substring(a.text, "(first second  third)"));

  const artifact_ref long_reason{false, "", seed_sha, std::string(1000, 'r')};
  const projection b = project(text, limits, long_reason);
  check_cut(text, limits, long_reason, b);
  CHECK(has_substring(b.text, "(" + std::string(157, 'r') + "...)"));

  const artifact_ref no_reason{false, "", seed_sha, ""};
  CHECK(has_substring(project(text, limits, no_reason).text, "NOT saved (no reason given)"));
}

TEST_CASE("the same input gives the same projection") {
  const std::string text = seed_report();
  const projection_limits limits{5000, 100, 0.6};
  const projection a = project(text, limits, seed_saved);
  const projection b = project(text, limits, seed_saved);
  CHECK(a.text == b.text);
  CHECK(a.head_bytes == b.head_bytes);
  CHECK(a.tail_bytes == b.tail_bytes);
}

TEST_CASE("the smallest limits still hold marker, footer and some text") {
  const std::string text = seed_report();
  const projection_limits limits{handoff::min_projection_bytes, handoff::min_projection_lines,
                                 0.75};
  const projection p = project(text, limits, seed_saved);
  check_cut(text, limits, seed_saved, p);
  CHECK(p.text.size() <= 512);
  CHECK(split_lines(p.text).size() <= 8);
  CHECK(p.text.substr(0, 6) == "BEGIN\n");
  CHECK(has_substring(p.text, "\nEND\n[Truncated: "));
}

TEST_CASE("limits too small for a cut are refused") {
  const std::string text = seed_report();
  CHECK_THROWS_AS(project(text, {511, 600, 0.75}, seed_saved), std::invalid_argument);
  CHECK_THROWS_AS(project(text, {16384, 7, 0.75}, seed_saved), std::invalid_argument);
  CHECK_THROWS_AS(project(text, {16384, 600, 0.01}, seed_saved), std::invalid_argument);
  CHECK_THROWS_AS(project(text, {16384, 600, 0.99}, seed_saved), std::invalid_argument);
  const artifact_ref long_path{true, "/" + std::string(600, 'p') + ".txt", seed_sha, ""};
  CHECK_THROWS_AS(project(text, {700, 600, 0.75}, long_path), std::invalid_argument);
  const artifact_ref no_path{true, "", seed_sha, ""};
  CHECK_THROWS_AS(project(text, {16384, 600, 0.75}, no_path), std::invalid_argument);
  // The same limits are fine for a text that needs no cut.
  CHECK(project("short", {5, 1, 0.0}, no_path).text == "short");
}
