// read_page() against Pi's read tool (engine/text/text_page.cpp): fixed cases with Pi's
// numbers, and random ones compared with a direct transcription of read.js + truncateHead.
#include "engine/text/text_page.hpp"
#include "engine/text/projection_notice.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "utf8.hpp"
#include "pi_read_reference.hpp"

using handoff::page_request;
using handoff::read_page;
using handoff::text_page;
using handoff::test::join;
using handoff::test::pi_read;
using handoff::test::pi_result;
using handoff::test::split;

namespace {

std::string numbered(std::size_t count, std::size_t width, bool trailing_newline) {
  std::string text;
  for (std::size_t i = 1; i <= count; ++i) {
    std::string line = std::to_string(i) + ":";
    line.resize(width, '.');
    text += line;
    if (i < count || trailing_newline) text += "\n";
  }
  return text;
}

// How random_lines() draws: a quarter of the texts have 1990 + [0, more_lines) lines (around
// the 2000-line cap), the rest 1 to 300; 10% of lines are empty, up to short_percent% short
// (under short_max bytes), the rest 20,000 + [0, long_extra) bytes (around the 50 KiB cap).
struct line_odds {
  std::size_t more_lines;
  std::size_t short_percent;
  std::size_t short_max;
  std::size_t long_extra;
  bool cjk;  // a third of the lines are of 3-byte characters (文)
};

// Lines joined with '\n', and a final '\n' half the time.
std::string random_lines(std::mt19937_64& engine, const line_odds& odds) {
  const auto below = [&](std::size_t n) { return static_cast<std::size_t>(engine() % n); };
  const std::size_t count = below(4) == 0 ? 1990 + below(odds.more_lines) : 1 + below(300);
  std::string text;
  for (std::size_t n = 0; n < count; ++n) {
    if (n > 0) text += '\n';
    const std::size_t kind = below(100);
    const std::size_t length = kind < 10                   ? 0
                               : kind < odds.short_percent ? below(odds.short_max)
                                                           : 20000 + below(odds.long_extra);
    if (odds.cjk && below(3) == 0) {
      for (std::size_t k = 0; k < length / 3; ++k) text += "\xE6\x96\x87";
    } else {
      text.append(length, static_cast<char>('a' + below(26)));
    }
  }
  if (below(2) == 0) text += '\n';
  return text;
}

}  // namespace

TEST_CASE("offset and limit select lines of text.split(\"\\n\"), 1-based") {
  const std::string text = "one\ntwo\nthree\nfour";
  const text_page page = read_page(text, {2, 2});
  CHECK(page.text == "two\nthree");
  CHECK(page.first_line == 2);
  CHECK(page.last_line == 3);
  CHECK(page.total_lines == 4);
  CHECK_FALSE(page.cut);
  CHECK(page.next_offset == 4);

  const text_page rest = read_page(text, {3, std::nullopt});
  CHECK(rest.text == "three\nfour");
  CHECK_FALSE(rest.next_offset.has_value());

  const text_page beyond = read_page(text, {4, 100});
  CHECK(beyond.text == "four");
  CHECK(beyond.last_line == 4);
  CHECK_FALSE(beyond.next_offset.has_value());
}

TEST_CASE("a final newline makes one more, empty, line") {
  const std::string text = "a\nb\n";
  CHECK(read_page(text, {1, std::nullopt}).total_lines == 3);
  CHECK(read_page(text, {1, std::nullopt}).text == "a\nb\n");
  const text_page last = read_page(text, {3, std::nullopt});
  CHECK(last.text.empty());
  CHECK(last.first_line == 3);
  CHECK(last.last_line == 3);
  CHECK(read_page("\r\nx\r\n", {2, 1}).text == "x\r");
}

TEST_CASE("an offset past the end fails with Pi's message") {
  const std::string text = "a\nb\nc\nd";
  CHECK_THROWS_WITH_AS(read_page(text, {5, std::nullopt}),
                       "Offset 5 is beyond end of file (4 lines total)", std::out_of_range);
  CHECK_THROWS_WITH_AS(read_page(text, {0, std::nullopt}),
                       "Offset 0 is beyond end of file (4 lines total)", std::out_of_range);
  CHECK_THROWS_AS(read_page("", {2, 1}), std::out_of_range);
  CHECK(read_page("", {1, 1}).text.empty());
  CHECK(read_page(std::string_view(), {1, std::nullopt}).last_line == 1);
}

TEST_CASE("limit 0 returns no lines and points back at the offset") {
  const text_page page = read_page("a\nb\nc", {2, 0});
  CHECK(page.text.empty());
  CHECK(page.first_line == 2);
  CHECK(page.last_line == 1);
  CHECK(page.next_offset == 2);
  CHECK_FALSE(page.cut);
}

TEST_CASE("the page stops at 2000 lines") {
  const std::string text = numbered(3000, 5, false);
  const text_page page = read_page(text, {1, std::nullopt});
  CHECK(page.last_line == 2000);
  CHECK(page.cut);
  CHECK(page.next_offset == 2001);
  CHECK(page.text == join(split(text), 0, 2000));

  const text_page second = read_page(text, {2001, std::nullopt});
  CHECK(second.last_line == 3000);
  CHECK_FALSE(second.cut);
}

TEST_CASE("a trailing newline is not counted against the 2000 lines, as in Pi") {
  const std::string text = numbered(2000, 5, true);  // 2001 lines, the last one empty
  const text_page page = read_page(text, {1, std::nullopt});
  CHECK(page.text == text);
  CHECK(page.last_line == 2001);
  CHECK_FALSE(page.cut);

  const std::string longer = numbered(2001, 5, true);
  const text_page cut = read_page(longer, {1, std::nullopt});
  CHECK(cut.last_line == 2000);
  CHECK(cut.cut);
}

TEST_CASE("the page stops at 50 KiB on a whole line") {
  const std::string text = numbered(1000, 100, false);
  const text_page page = read_page(text, {1, std::nullopt});
  // n lines cost 101 n - 1 bytes: 506 lines are 51,105 bytes, 507 would be 51,206.
  CHECK(page.last_line == 506);
  CHECK(page.text.size() == 51105);
  CHECK(page.cut);
  CHECK(page.next_offset == 507);

  const text_page limited = read_page(text, {1, 10});
  CHECK(limited.last_line == 10);
  CHECK_FALSE(limited.cut);
}

TEST_CASE("a first line over 50 KiB gives its first 50 KiB, cut on a character") {
  std::string line = "x";
  while (line.size() < 60000) line += "\xE4\xB8\xAD";  // 中
  const std::string text = "short\n" + line + "\nafter";
  const text_page page = read_page(text, {2, std::nullopt});
  CHECK(page.partial_line);
  CHECK(page.cut);
  CHECK(page.first_line == 2);
  CHECK(page.last_line == 2);
  CHECK(page.next_offset == 3);
  CHECK(page.text.size() <= handoff::read_max_bytes);
  CHECK(page.text.size() > handoff::read_max_bytes - 3);
  CHECK(handoff::valid_utf8(page.text));
  CHECK(line.substr(0, page.text.size()) == page.text);

  // Pi shows nothing from that line; our page's `partial_line` is the only difference.
  CHECK(pi_read(text, 2, std::nullopt).first_line_exceeds);
  CHECK_FALSE(read_page(text, {1, std::nullopt}).partial_line);
}

TEST_CASE("random texts: read_page shows what Pi's read shows") {
  std::mt19937_64 engine(20260101);
  const auto below = [&](std::size_t n) { return static_cast<std::size_t>(engine() % n); };
  for (int i = 0; i < 400; ++i) {
    CAPTURE(i);
    const std::string text = random_lines(engine, {20, 97, 60, 40000, false});
    const std::size_t total = split(text).size();
    const std::size_t offset = 1 + below(total);
    const std::optional<std::size_t> limit =
        below(3) == 0 ? std::nullopt : std::optional<std::size_t>(below(2500));
    CAPTURE(offset);
    const pi_result pi = pi_read(text, offset, limit);
    const text_page page = read_page(text, {offset, limit});
    CHECK(page.total_lines == total);
    if (pi.first_line_exceeds) {
      CHECK(page.partial_line);
      CHECK(page.text == split(text)[offset - 1].substr(0, handoff::read_max_bytes));
      continue;
    }
    CHECK_FALSE(page.partial_line);
    CHECK(page.text == pi.content);
    CHECK(page.last_line == pi.last_line);
    CHECK(page.next_offset ==
          (pi.last_line < total ? std::optional<std::size_t>(pi.last_line + 1) : std::nullopt));
  }
}

// ---- read_plan: the calls that read a run of lines back uncut in Pi 1.6.0 -------------------

namespace {

std::vector<handoff::read_step> plan_of(std::string_view text, std::size_t first, std::size_t last) {
  std::vector<handoff::read_step> steps;
  handoff::read_plan plan(text, first, last);
  while (const auto step = plan.next()) steps.push_back(*step);
  return steps;
}

// Checks each step against the transcription of Pi's tools: a read returns exactly its lines,
// uncut; a range is within Pi's bash page and on character boundaries; the steps tile lines
// first..last in order; and each read is as long as a page allows (one more line would be cut).
void check_plan(std::string_view text, std::size_t first, std::size_t last) {
  const std::vector<std::string_view> lines = split(text);
  const std::vector<handoff::read_step> steps = plan_of(text, first, last);
  std::size_t line = first;
  std::size_t byte_in_line = 0;  // bytes of `line` read so far in ranges
  for (const handoff::read_step& step : steps) {
    CAPTURE(step.first_line);
    REQUIRE(step.first_line == line);
    if (step.bytes) {
      REQUIRE(step.last_line == line);
      const std::string_view shown = text.substr(step.first_byte, step.end_byte - step.first_byte);
      CHECK(lines[line - 1].size() > handoff::read_max_bytes);
      CHECK(shown.size() <= handoff::read_max_bytes);
      CHECK(handoff::test::pi_bash_shows_whole(shown));
      CHECK(handoff::utf8_floor(text, step.first_byte) == step.first_byte);
      CHECK(handoff::utf8_floor(text, step.end_byte) == step.end_byte);
      CHECK(lines[line - 1].substr(byte_in_line, shown.size()) == shown);
      byte_in_line += shown.size();
      if (byte_in_line == lines[line - 1].size()) {
        ++line;
        byte_in_line = 0;
      }
      continue;
    }
    REQUIRE(byte_in_line == 0);
    const std::size_t limit = step.last_line - step.first_line + 1;
    const handoff::test::pi_tool_output out = handoff::test::pi_read_tool(lines, step.first_line, limit, "F");
    CHECK_FALSE(out.cut);
    CHECK_FALSE(out.refused);
    CHECK(out.content == join(lines, step.first_line - 1, step.last_line));
    if (step.last_line < last) {
      // The next line would not fit the page (or is a long line of its own).
      const handoff::test::pi_tool_output more = handoff::test::pi_read_tool(lines, step.first_line, limit + 1, "F");
      CHECK((more.cut || more.refused || limit == handoff::read_max_lines));
    }
    line = step.last_line + 1;
  }
  CHECK(line == last + 1);
}

}  // namespace

TEST_CASE("read_plan: whole pages of at most 50 KiB joined and 2000 lines") {
  // n lines of 100 bytes cost 101 n - 1 bytes: 506 lines are one page, the 507th starts the next.
  const std::string text = numbered(1200, 100, false);
  const std::vector<handoff::read_step> steps = plan_of(text, 1, 1200);
  REQUIRE(steps.size() == 3);
  CHECK(steps[0].last_line == 506);
  CHECK(steps[1].first_line == 507);
  CHECK(steps[1].last_line == 1012);
  CHECK(steps[2].last_line == 1200);
  check_plan(text, 1, 1200);
  check_plan(text, 300, 700);

  const std::string short_lines = numbered(4500, 3, true);
  const std::vector<handoff::read_step> by_lines = plan_of(short_lines, 2, 4501);
  REQUIRE(by_lines.size() == 3);
  CHECK(by_lines[0].last_line == 2001);
  CHECK(by_lines[1].last_line == 4001);
  check_plan(short_lines, 2, 4501);
}

TEST_CASE("read_plan: a line of exactly 50 KiB is read, one byte more is read in ranges") {
  const std::string at = std::string(handoff::read_max_bytes, 'a');
  const std::string over = std::string(handoff::read_max_bytes + 1, 'b');
  const std::string text = "x\n" + at + "\n" + over + "\ny";
  const std::vector<handoff::read_step> steps = plan_of(text, 1, 4);
  REQUIRE(steps.size() == 5);
  CHECK_FALSE(steps[0].bytes);  // "x" alone: with line 2 it would be 51,202 bytes
  CHECK(steps[0].last_line == 1);
  CHECK_FALSE(steps[1].bytes);
  CHECK(steps[1].first_line == 2);
  CHECK(steps[1].last_line == 2);
  CHECK(steps[2].bytes);
  CHECK(steps[2].end_byte - steps[2].first_byte == handoff::read_max_bytes);
  CHECK(steps[3].bytes);
  CHECK(steps[3].end_byte - steps[3].first_byte == 1);
  CHECK_FALSE(steps[4].bytes);
  check_plan(text, 1, 4);
  CHECK_THROWS_AS(handoff::read_plan(text, 0, 2), std::out_of_range);
  CHECK_THROWS_AS(handoff::read_plan(text, 3, 2), std::out_of_range);
  CHECK_THROWS_AS(handoff::read_plan(text, 1, 5), std::out_of_range);
}

TEST_CASE("read_plan: ranges of a long CJK line end on characters") {
  std::string line;
  while (line.size() < 3 * handoff::read_max_bytes) line += "\xE4\xB8\xAD";  // 中
  const std::string text = "before\n" + line + "\nafter\n";
  const std::vector<handoff::read_step> steps = plan_of(text, 1, 4);
  // 51,200 is not a multiple of 3: each full range is 51,198 bytes.
  CHECK(steps[1].end_byte - steps[1].first_byte == 51198);
  check_plan(text, 1, 4);
  check_plan(text, 2, 2);
}

TEST_CASE("random texts: read_plan's calls are exact in Pi's read and bash") {
  std::mt19937_64 engine(20261201);
  const auto below = [&](std::size_t n) { return static_cast<std::size_t>(engine() % n); };
  for (int i = 0; i < 300; ++i) {
    CAPTURE(i);
    const std::string text = random_lines(engine, {3000, 95, 80, 120000, true});
    const std::size_t total = split(text).size();
    const std::size_t first = 1 + below(total);
    const std::size_t last = first + below(total - first + 1);
    check_plan(text, first, last);
  }
}

// ---- read_plan for Gemini CLI 0.61.0's read_file --------------------------------------------

namespace {

// Gemini CLI 0.61.0's read_file on a text file with start_line and end_line (processSingleFileContent,
// its text case): the lines split on /\r?\n/, each over 2,000 UTF-16 units cut to 2,000 and
// "... [truncated]"; joined with "\n". `cut` when any line was cut.
struct gemini_read_output {
  std::string content;
  bool cut = false;
};

std::size_t utf16_units(std::string_view line) {
  std::size_t units = 0;
  for (const char c : line) {
    const auto byte = static_cast<unsigned char>(c);
    if ((byte & 0xC0) != 0x80) units += byte >= 0xF0 ? 2 : 1;  // a 4-byte sequence is a surrogate pair
  }
  return units;
}

gemini_read_output gemini_read_file(const std::vector<std::string_view>& lines, std::size_t start, std::size_t end) {
  gemini_read_output out;
  for (std::size_t i = start; i <= std::min(end, lines.size()); ++i) {
    if (i > start) out.content.push_back('\n');
    if (utf16_units(lines[i - 1]) > 2000) {
      out.cut = true;
      out.content += "<cut>";
      continue;
    }
    out.content += lines[i - 1];
  }
  return out;
}

}  // namespace

TEST_CASE("read_plan, Gemini CLI's read_file: lines of at most 2,000 bytes in pages of 32,000, longer ones in shell ranges") {
  const handoff::reader_profile& gemini = handoff::gemini_reader;
  std::mt19937_64 engine(20261205);
  const auto below = [&](std::size_t n) { return static_cast<std::size_t>(engine() % n); };
  for (int i = 0; i < 200; ++i) {
    CAPTURE(i);
    const std::string text = random_lines(engine, {2500, 90, i % 2 == 0 ? 2100u : 80u, i % 3 == 0 ? 70000u : 3000u, true});
    const std::vector<std::string_view> lines = split(text);
    const std::size_t first = 1 + below(lines.size());
    const std::size_t last = first + below(lines.size() - first + 1);
    handoff::read_plan plan(text, first, last, gemini);
    std::size_t line = first;
    std::size_t byte_in_line = 0;
    while (const auto step = plan.next()) {
      REQUIRE(step->first_line == line);
      if (step->bytes) {
        CHECK(lines[line - 1].size() > gemini.line_bytes);
        const std::string_view shown = std::string_view(text).substr(step->first_byte, step->end_byte - step->first_byte);
        CHECK(shown.size() <= gemini.page_bytes);  // run_shell_command cuts past 40,000 characters
        CHECK(lines[line - 1].substr(byte_in_line, shown.size()) == shown);
        byte_in_line += shown.size();
        if (byte_in_line == lines[line - 1].size()) {
          ++line;
          byte_in_line = 0;
        }
        continue;
      }
      REQUIRE(byte_in_line == 0);
      const gemini_read_output out = gemini_read_file(lines, step->first_line, step->last_line);
      CHECK_FALSE(out.cut);
      CHECK(out.content == join(lines, step->first_line - 1, step->last_line));
      CHECK(out.content.size() <= gemini.page_bytes);
      CHECK(step->last_line - step->first_line + 1 <= gemini.page_lines);
      line = step->last_line + 1;
    }
    CHECK(line == last + 1);
  }
  // A line of exactly 2,000 bytes is read whole; one of 2,001 is a range.
  const std::string text = "a\n" + std::string(2000, 'x') + "\n" + std::string(2001, 'y') + "\nz";
  handoff::read_plan plan(text, 1, 4, gemini);
  std::vector<handoff::read_step> steps;
  while (const auto step = plan.next()) steps.push_back(*step);
  REQUIRE(steps.size() == 3);
  CHECK_FALSE(steps[0].bytes);
  CHECK(steps[0].last_line == 2);
  CHECK(steps[1].bytes);
  CHECK(steps[2].first_line == 4);
}

namespace {

// GitHub Copilot CLI 1.0.102's view {path, view_range: [first, last]} on a file of `lines`, as
// measured: the lines joined with '\n', nothing added to a line, whatever their count, cut at
// 20,480 bytes (a note follows then); any tool output over 20,480 bytes is replaced by a preview.
struct copilot_view_output {
  std::string content;
  bool cut = false;
};

copilot_view_output copilot_view(const std::vector<std::string_view>& lines, std::size_t first, std::size_t last) {
  copilot_view_output out{join(lines, first - 1, last), false};
  if (out.content.size() > 20480) out = {out.content.substr(0, 20480), true};
  return out;
}

}  // namespace

TEST_CASE("read_plan, Copilot CLI's view: pages of at most 20,000 bytes under its 20,480-byte cut, longer lines in shell ranges") {
  const handoff::reader_profile& copilot = handoff::copilot_reader;
  std::mt19937_64 engine(20261206);
  const auto below = [&](std::size_t n) { return static_cast<std::size_t>(engine() % n); };
  for (int i = 0; i < 200; ++i) {
    CAPTURE(i);
    const std::string text = random_lines(engine, {2500, 90, i % 2 == 0 ? 3000u : 80u, i % 3 == 0 ? 50000u : 3000u, true});
    const std::vector<std::string_view> lines = split(text);
    const std::size_t first = 1 + below(lines.size());
    const std::size_t last = first + below(lines.size() - first + 1);
    handoff::read_plan plan(text, first, last, copilot);
    std::size_t line = first;
    std::size_t byte_in_line = 0;
    while (const auto step = plan.next()) {
      REQUIRE(step->first_line == line);
      if (step->bytes) {
        CHECK(lines[line - 1].size() > copilot.page_bytes);
        const std::string_view shown = std::string_view(text).substr(step->first_byte, step->end_byte - step->first_byte);
        // bash appends "\n<shellId: N completed with exit code C>" (under 60 bytes): still under the cut.
        CHECK(shown.size() + 60 <= 20480);
        CHECK(lines[line - 1].substr(byte_in_line, shown.size()) == shown);
        byte_in_line += shown.size();
        if (byte_in_line == lines[line - 1].size()) {
          ++line;
          byte_in_line = 0;
        }
        continue;
      }
      REQUIRE(byte_in_line == 0);
      const copilot_view_output out = copilot_view(lines, step->first_line, step->last_line);
      CHECK_FALSE(out.cut);
      CHECK(out.content == join(lines, step->first_line - 1, step->last_line));
      CHECK(out.content.size() <= copilot.page_bytes);
      line = step->last_line + 1;
    }
    CHECK(line == last + 1);
  }
  // The call as a footer writes it: Copilot's view with its view_range.
  std::string call;
  handoff::append_read_call(call, handoff::read_step{.first_line = 142, .last_line = 476}, "/s/f.txt", "handoff", copilot);
  CHECK(call == "view view_range=[142,476]");
}

namespace {

// What cline 3.0.65's read_files shows for lines start..end: each "N | line", N right-aligned to
// the width of the range's last number, joined with '\n' (measured); its length in UTF-16 units,
// which cline's 8,000-character cut counts.
std::size_t cline_read_files_units(const std::vector<std::string_view>& lines, std::size_t start, std::size_t end) {
  const std::size_t width = std::to_string(end).size();
  std::size_t units = 0;
  for (std::size_t i = start; i <= end; ++i) units += (i > start ? 1 : 0) + width + 3 + utf16_units(lines[i - 1]);
  return units;
}

}  // namespace

TEST_CASE("read_plan, cline's read_files: every page shown with its 'N | ' prefixes stays under cline's 8,000-character cut") {
  const handoff::reader_profile& cline = handoff::cline_reader;
  std::mt19937_64 engine(20261206);
  const auto below = [&](std::size_t n) { return static_cast<std::size_t>(engine() % n); };
  for (int i = 0; i < 200; ++i) {
    CAPTURE(i);
    const std::string text = random_lines(engine, {2500, 95, i % 2 == 0 ? 300u : 40u, i % 3 == 0 ? 30000u : 3000u, true});
    const std::vector<std::string_view> lines = split(text);
    const std::size_t first = 1 + below(lines.size());
    const std::size_t last = first + below(lines.size() - first + 1);
    handoff::read_plan plan(text, first, last, cline);
    std::size_t line = first;
    std::size_t byte_in_line = 0;
    while (const auto step = plan.next()) {
      REQUIRE(step->first_line == line);
      if (step->bytes) {
        const std::string_view shown = std::string_view(text).substr(step->first_byte, step->end_byte - step->first_byte);
        CHECK(shown.size() <= 8000);  // run_commands' output, cut the same way
        CHECK(lines[line - 1].substr(byte_in_line, shown.size()) == shown);
        byte_in_line += shown.size();
        if (byte_in_line == lines[line - 1].size()) {
          ++line;
          byte_in_line = 0;
        }
        continue;
      }
      REQUIRE(byte_in_line == 0);
      CHECK(cline_read_files_units(lines, step->first_line, step->last_line) <= 8000);
      CHECK(step->last_line - step->first_line + 1 <= cline.page_lines);
      line = step->last_line + 1;
    }
    CHECK(line == last + 1);
  }
}
