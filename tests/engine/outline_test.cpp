// The outline of a projection's omitted middle (engine/text/outline.hpp): every omitted level-1/2
// heading with its true line, the eighth it stays within, the order of levels when they do not
// all fit, fenced code, clipped CJK titles, and texts with no omitted heading projected as
// before. Every projection here also goes through check_cut (projection_checks.hpp), which reads
// each entry back from the text as a parent would.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "engine/text/projection.hpp"
#include "engine/text/reader_profile.hpp"
#include "engine/fs/sha256.hpp"
#include "projection_checks.hpp"

using handoff::artifact_ref;
using handoff::project;
using handoff::projection;
using handoff::projection_limits;
using namespace handoff::test;

namespace {

const std::string report_sha = "5f70bf18a086007016e948b04aed3b82103a36bea41755b6cddfaf10ace3c6ef";
const artifact_ref saved_ref{true, "/home/user/.pi/agent/cache/openpi/subagent-results/" + report_sha + ".txt",
                             report_sha, ""};
const artifact_ref unsaved_ref{false, "", report_sha, "No space left on device"};
const projection_limits wait_caps{16384, 600, 0.75};

// A markdown report built line by line, remembering where each heading went.
struct markdown_report {
  std::string text;
  std::size_t lines = 0;
  std::vector<std::pair<std::size_t, unsigned>> headings;  // line, level

  void line(const std::string& s) {
    if (lines > 0) text.push_back('\n');
    text += s;
    ++lines;
  }
  void heading(unsigned level, const std::string& title) {
    line(std::string(level, '#') + " " + title);
    headings.emplace_back(lines, level);
  }
  void body(std::size_t count) {
    for (std::size_t i = 0; i < count; ++i) {
      line("Evidence " + std::to_string(lines) + ": the worker retried the upload and the pool grew by one.");
    }
    line("");
  }
};

// The entries' lines of the projection's outline, after check_cut has checked them.
std::vector<std::size_t> outline_lines(const std::string& text, const projection_limits& limits,
                                       const artifact_ref& artifact, const projection& p) {
  const omitted_range omitted = check_cut(text, limits, artifact, p);
  const projection_parts parts = split_projection(p.text, !text.empty() && text.back() == '\n');
  return check_outline(parts.outline, text, limits, artifact, omitted.first, omitted.last, p);
}

bool has_text(std::string_view haystack, std::string_view needle) {
  return haystack.find(needle) != std::string_view::npos;
}

}  // namespace

TEST_CASE("a report with headings in the middle: every omitted level-1/2 heading with its true line") {
  markdown_report r;
  r.heading(1, "Investigation of the ingest outage");
  r.body(20);
  for (int section = 1; section <= 24; ++section) {
    r.heading(2, std::to_string(section) + ". Section " + std::to_string(section));
    r.body(12);
    for (int sub = 1; sub <= 3; ++sub) {
      r.heading(3, std::to_string(section) + "." + std::to_string(sub) + " Detail");
      r.body(10);
    }
  }
  r.heading(2, "Verdict");
  r.line("VERDICT: ship it");
  REQUIRE(r.text.size() > 70000);

  const projection p = project(r.text, wait_caps, saved_ref);
  REQUIRE(p.truncated);
  const std::vector<std::size_t> listed = outline_lines(r.text, wait_caps, saved_ref, p);
  CHECK(has_text(p.text, "\n[Omitted sections, at their lines of the full text (read offset=LINE):\n"));
  std::size_t omitted_major = 0;
  for (const auto& [line, level] : r.headings) {
    const bool omitted = line >= p.omitted_first && line < p.omitted_first + p.omitted_count;
    if (!omitted || level > 2) continue;
    ++omitted_major;
    CAPTURE(line);
    CHECK(std::find(listed.begin(), listed.end(), line) != listed.end());
  }
  CHECK(omitted_major >= 15);
  // Level 3 did not all fit: the outline says how many it left and how to list them.
  CHECK(p.outline_left_out > 0);
  CHECK(has_text(p.text, " more (level 3): bash `'handoff' read --outline " + std::to_string(p.omitted_first) + "-"));
  CHECK(has_text(p.text, "VERDICT: ship it"));
}

TEST_CASE("200 headings in the middle: within an eighth, levels in order, the partial level spread") {
  markdown_report r;
  r.line("# Top");
  r.body(3);
  for (int i = 0; i < 200; ++i) {
    const unsigned level = i % 20 == 0 ? 1U : i % 4 == 0 ? 2U : i % 2 == 0 ? 3U : 4U;
    r.heading(level, "Heading number " + std::to_string(i) + " with a title of some length");
    r.body(2);
  }
  r.line("END");
  for (const projection_limits limits :
       {wait_caps, projection_limits{8192, 300, 0.75}, projection_limits{12000, 700, 0.5}}) {
    CAPTURE(limits.max_bytes);
    const projection p = project(r.text, limits, saved_ref);
    const std::vector<std::size_t> listed = outline_lines(r.text, limits, saved_ref, p);
    REQUIRE(!listed.empty());
    CHECK(p.outline_left_out > 0);
    // Every omitted level-1 heading is listed; the listed ones of the level that did not fit
    // whole reach from the first quarter of the middle to the last.
    std::vector<std::size_t> partial;
    unsigned partial_level = 0;
    for (unsigned level = 1; level <= 4 && partial_level == 0; ++level) {
      std::size_t omitted = 0;
      partial.clear();
      for (const auto& [line, l] : r.headings) {
        if (l != level || line < p.omitted_first || line >= p.omitted_first + p.omitted_count) continue;
        ++omitted;
        if (std::find(listed.begin(), listed.end(), line) != listed.end()) partial.push_back(line);
      }
      if (partial.size() < omitted) partial_level = level;
    }
    REQUIRE(partial_level >= 2);
    if (partial.size() >= 2) {
      const std::size_t quarter = p.omitted_count / 4;
      CHECK(partial.front() < p.omitted_first + quarter);
      CHECK(partial.back() >= p.omitted_first + p.omitted_count - quarter);
    }
  }
}

TEST_CASE("a # inside a fenced code block is not a heading") {
  markdown_report r;
  r.line("# Report");
  r.body(200);
  r.line("```bash");
  for (int i = 0; i < 40; ++i) r.line("# step " + std::to_string(i) + ": rerun the migration");
  r.line("```");
  r.heading(2, "Root cause");
  r.body(60);
  r.line("~~~");
  r.line("## not a heading either");
  r.line("~~~");
  r.body(200);
  r.line("VERDICT: ship it");
  const projection p = project(r.text, wait_caps, saved_ref);
  const std::vector<std::size_t> listed = outline_lines(r.text, wait_caps, saved_ref, p);
  CHECK(listed == std::vector<std::size_t>{r.headings.at(0).first});
  CHECK(p.outline_left_out == 0);
  CHECK(has_text(p.text, "## Root cause]\n"));
  CHECK_FALSE(has_text(p.text, "step 1: rerun"));
}

TEST_CASE("CJK headings are clipped on character boundaries, and brackets cannot close the block") {
  markdown_report r;
  r.line("# 报告");
  r.body(250);
  std::string cjk;
  for (int i = 0; i < 60; ++i) cjk += "\xE4\xB8\xAD";  // 中
  r.heading(2, "x" + cjk);  // 181 bytes: the clip falls inside a character
  r.body(20);
  r.heading(2, "[... middle omitted: lines 1-2 of 3, 4 bytes ...] [Truncated: 1 byte]");
  r.body(200);
  r.line("END");
  const projection p = project(r.text, wait_caps, saved_ref);
  const std::vector<std::size_t> listed = outline_lines(r.text, wait_caps, saved_ref, p);
  REQUIRE(listed.size() == 2);
  // 77 bytes at most before "...": "x" and 25 whole characters (76 bytes).
  std::string clipped = "x";
  for (int i = 0; i < 25; ++i) clipped += "\xE4\xB8\xAD";
  CHECK(has_text(p.text, "  " + std::to_string(listed[0]) + " ## " + clipped + "...\n"));
  CHECK(handoff::valid_utf8(p.text));
  CHECK(has_text(p.text, "## (... middle omitted: lines 1-2 of 3, 4 bytes ...) (Truncated: 1 byte)]\n"));
  // One marker, one footer: split_projection (in check_cut) requires it; and only one of each here.
  CHECK(std::count(p.text.begin(), p.text.end(), '[') == 3);  // marker, outline, footer
}

TEST_CASE("no heading in the omitted lines: the projection is the one made without an outline, byte for byte") {
  // Headings in the head and the tail only; the middle has what only looks like them.
  markdown_report r;
  r.line("# Report");
  r.body(40);
  for (int i = 0; i < 300; ++i) {
    r.line("#" + std::to_string(i) + " is an issue number, not a heading");
    r.line("- a list item");
    r.line("");
    r.line("---");
    r.line("    # indented code");
  }
  r.line("```");
  r.line("# a comment");
  r.line("```");
  r.body(40);
  r.heading(2, "Verdict");
  r.line("VERDICT: ship it");
  projection_limits plain = wait_caps;
  plain.outline = false;
  const projection p = project(r.text, wait_caps, saved_ref);
  check_cut(r.text, wait_caps, saved_ref, p);
  CHECK(p.text == project(r.text, plain, saved_ref).text);
  CHECK(p.outline_listed == 0);
  // The bytes this text projected to before the outline existed (commit 38c4f14).
  CHECK(handoff::sha256_hex(p.text) == "90d54a27a70836154427d1d2b24629062c4f95a24d72fcd6ad5b585b55322ecd");
  // A text with no heading at all, and one whose only headings are shown, likewise.
  const std::string lines = r.text.substr(r.text.find('\n') + 1);
  CHECK(project(lines, wait_caps, saved_ref).text == project(lines, plain, saved_ref).text);
}

TEST_CASE("the outline names the reader's tools, and says so when the full text was not saved") {
  markdown_report r;
  r.line("# Report");
  r.body(30);
  for (int i = 0; i < 120; ++i) {
    r.heading(i % 10 == 0 ? 2U : 3U, "Part " + std::to_string(i));
    r.body(8);
  }
  r.line("END");
  artifact_ref claude = saved_ref;
  claude.profile = &handoff::claude_code_reader;
  const projection for_claude = project(r.text, wait_caps, claude);
  // (check_cut follows Pi's calls only: the outline is read back on its own here.)
  const projection_parts parts = split_projection(for_claude.text, false);
  CHECK(check_outline(parts.outline, r.text, wait_caps, claude, for_claude.omitted_first,
                      for_claude.omitted_first + for_claude.omitted_count - 1, for_claude)
            .size() == for_claude.outline_listed);
  CHECK(has_text(for_claude.text, "[Omitted sections, at their lines of the full text (Read offset=LINE):\n"));
  CHECK(has_text(for_claude.text, " more (level 3): Bash `'handoff' read --outline "));

  const projection lost = project(r.text, wait_caps, unsaved_ref);
  outline_lines(r.text, wait_caps, unsaved_ref, lost);
  CHECK(has_text(lost.text, "[Omitted sections, at their lines of the full text (not saved):\n"));
  CHECK(has_text(lost.text, " more (level 3), not listed]\n"));
  CHECK_FALSE(has_text(lost.text, "--outline"));
}

TEST_CASE("limits too small for an outline leave it out, and a short outline costs only its size") {
  markdown_report r;
  r.line("# Report");
  r.body(300);
  r.heading(2, "Root cause");
  r.body(300);
  r.line("END");
  // At 512 bytes an eighth (64) holds no outline: the projection is the one without.
  projection_limits tiny{512, 40, 0.75};
  projection_limits tiny_plain = tiny;
  tiny_plain.outline = false;
  const projection small = project(r.text, tiny, saved_ref);
  check_cut(r.text, tiny, saved_ref, small);
  CHECK(small.text == project(r.text, tiny_plain, saved_ref).text);
  // At 16 KiB one heading's outline (the header and one entry: 93 bytes) takes about that much
  // from the head and tail (whole lines), not the eighth (2 KiB).
  projection_limits plain = wait_caps;
  plain.outline = false;
  const projection with = project(r.text, wait_caps, saved_ref);
  const projection without = project(r.text, plain, saved_ref);
  CHECK(outline_lines(r.text, wait_caps, saved_ref, with).size() == 1);
  const std::size_t shown_with = with.head_bytes + with.tail_bytes;
  const std::size_t shown_without = without.head_bytes + without.tail_bytes;
  CHECK(shown_with < shown_without);
  CHECK(shown_without - shown_with <= 200);
}
