// Property test of project() over thousands of random texts and limits (fixed seed, so a
// failure reproduces; the CAPTUREd case number and seed name it). Every cut is checked by
// projection_checks.hpp: within both limits, valid UTF-8, head a prefix and tail a suffix,
// and head + what Pi 1.6.0's read and bash tools (pi_read_reference.hpp) return for the
// footer's calls + tail == the text, each call uncut and never refused.
#include <doctest/doctest.h>

#include <cstdint>
#include <iterator>
#include <random>
#include <stdexcept>
#include <string>
#include <string_view>

#include "engine/text/projection.hpp"
#include "engine/text/text_page.hpp"
#include "utf8.hpp"
#include "projection_checks.hpp"

using handoff::artifact_ref;
using handoff::projection;
using handoff::projection_limits;
using namespace handoff::test;

namespace {

constexpr std::uint64_t seed = 0x68616e646f6666;  // "handoff"
constexpr int cases = 3000;

// Draws from a fixed-seed engine with our own arithmetic, so the cases are the same with
// every standard library (std::uniform_int_distribution is not specified bit for bit).
class draw {
 public:
  explicit draw(std::uint64_t s) : engine_(s) {}
  std::size_t below(std::size_t n) { return static_cast<std::size_t>(engine_() % n); }
  std::size_t between(std::size_t lo, std::size_t hi) { return lo + below(hi - lo + 1); }
  bool chance(std::size_t percent) { return below(100) < percent; }

 private:
  std::mt19937_64 engine_;
};

// One character of 1 to max_width bytes (a few ASCII ones are '\r', for CRLF-like lines).
void append_char(std::string& out, draw& d, std::size_t max_width) {
  switch (d.between(1, max_width)) {
    case 1:
      out.push_back(d.chance(3) ? '\r' : static_cast<char>('a' + d.below(26)));
      break;
    case 2:
      out += "\xC3\xA9";
      break;  // é
    case 3:
      out += d.chance(50) ? "\xE4\xB8\xAD" : "\xE6\x96\x87";
      break;  // 中 文
    default:
      out += d.chance(50) ? "\xF0\x9F\x98\x80" : "\xF0\x9F\x9A\x80";
      break;  // 😀 🚀
  }
}

std::size_t line_length(draw& d) {
  const std::size_t kind = d.below(100);
  if (kind < 10) return 0;
  if (kind < 75) return d.between(1, 80);
  if (kind < 95) return d.between(81, 2000);
  return d.between(2001, 60000);
}

// What starts some lines: ATX headings (some indented, some not headings at all), fences and
// setext underlines, so that outlines (outline.hpp) are made and read back too.
constexpr std::string_view markdown_starts[] = {"# ", "## ", "### ", "###### ", "   ## ", "#x ", "```", "~~~",
                                                "===", "---", "- ", "    # "};

// Lines are a random run of characters repeated to the drawn length: every width still meets
// every cut position, at a fraction of the cost of drawing each character.
std::string random_text(draw& d, draw& markdown) {
  const std::size_t kind = d.below(10);
  const std::size_t lines = kind < 2   ? d.between(1, 3)
                            : kind < 8 ? d.between(4, 400)
                                       : d.between(401, 3000);
  const std::size_t max_width = d.between(1, 4);
  std::string text;
  std::string run;
  for (std::size_t i = 0; i < lines && text.size() < 300000; ++i) {
    if (i > 0) text.push_back('\n');
    if (markdown.chance(8)) text += markdown_starts[markdown.below(std::size(markdown_starts))];
    run.clear();
    for (std::size_t n = d.between(1, 24); n > 0; --n) append_char(run, d, max_width);
    const std::size_t target = text.size() + line_length(d);
    while (text.size() + run.size() <= target) text += run;
    while (text.size() < target) append_char(text, d, max_width);
  }
  if (d.chance(40)) text.push_back('\n');
  return text;
}

// `roomy`: the limits leave room for a long CLI path (beside a long artifact path, a long CLI
// path does not fit the 512-byte minimum; then the CLI is the bare name).
artifact_ref random_artifact(draw& d, bool roomy) {
  const std::string sha(64, 'a');
  if (d.chance(80)) {
    artifact_ref saved{true, "/" + std::string(d.between(20, 120), 'd') + "/" + sha + ".txt", sha, ""};
    // The CLI the footer names: the bare name, or an absolute path up to --cli-path's 200 bytes.
    if (roomy && d.chance(70)) saved.reader = "/" + std::string(d.between(1, 190), 'c') + "/handoff";
    return saved;
  }
  return {false, "", sha,
          d.chance(50) ? "No space left on device" : std::string(d.between(0, 300), 'e')};
}

}  // namespace

TEST_CASE("random texts and limits: every projection keeps every promise") {
  draw d(seed);
  draw markdown(seed + 1);  // its own draws: the limits and artifacts stay those drawn before
  int cut = 0;
  int partial = 0;
  int several_reads = 0;  // footers listing more than one call
  int byte_ranges = 0;    // footers with a `handoff read --bytes` command
  int plans = 0;          // footers with the `handoff read --plan` command
  int outlines = 0;       // projections with an outline of their omitted headings
  int left_out = 0;       // outlines that left some headings out
  for (int i = 0; i < cases; ++i) {
    CAPTURE(i);
    const std::string text = random_text(d, markdown);
    const projection_limits limits{d.between(512, 40000), d.between(8, 700),
                                   static_cast<double>(d.between(50, 950)) / 1000.0};
    const artifact_ref artifact = random_artifact(d, limits.max_bytes >= 1024);
    CAPTURE(limits.max_bytes);
    CAPTURE(limits.max_lines);
    CAPTURE(limits.head_share);
    REQUIRE(handoff::valid_utf8(text));

    const projection p = handoff::project(text, limits, artifact);
    const bool should_fit =
        text.size() <= limits.max_bytes && split_lines(text).size() <= limits.max_lines;
    CHECK(handoff::fits(text, limits) == should_fit);
    // Given the shape the queue measured, the same projection, without counting lines again.
    CHECK(handoff::fits(handoff::measure(text), limits) == should_fit);
    CHECK(handoff::project(text, limits, artifact, handoff::measure(text)).text == p.text);
    if (should_fit) {
      CHECK_FALSE(p.truncated);
      CHECK(p.text == text);
      continue;
    }
    ++cut;
    if (p.head_partial || p.tail_partial) ++partial;
    // check_cut follows the footer's calls (or those its plan command lists) in the model of
    // Pi's read and bash tools: each within one page, never cut or refused, and together the
    // omitted middle byte for byte.
    check_cut(text, limits, artifact, p);
    if (p.text.find("calls, each shown whole: ") != std::string::npos) ++several_reads;
    if (p.text.find("' read --bytes ") != std::string::npos) ++byte_ranges;
    if (p.text.find("' read --plan ") != std::string::npos) ++plans;
    if (p.outline_listed > 0) ++outlines;
    if (p.outline_left_out > 0) ++left_out;
    if (i % 10 == 0) CHECK(handoff::project(text, limits, artifact).text == p.text);
  }
  // The generator must exercise both kinds of cut, or the property says little.
  CHECK(cut > cases / 2);
  CHECK(partial > cases / 20);
  MESSAGE("cut " << cut << ", partial " << partial << ", several reads " << several_reads << ", byte ranges "
                 << byte_ranges << ", plan commands " << plans << ", outlines " << outlines << " (" << left_out
                 << " leaving headings out)");
  CHECK(several_reads > cases / 50);
  CHECK(byte_ranges > 10);  // listed only when the average line is over 50 KiB or room is left
  CHECK(plans > cases / 50);
  CHECK(outlines > cases / 10);
  CHECK(left_out > cases / 100);
}
