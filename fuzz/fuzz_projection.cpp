// project() (engine/projection*) on random texts and limits, checked with the same
// invariants as the property test (tests/support/projection_checks.hpp, run here outside a doctest
// test case: a failed check aborts): within max_bytes and max_lines; head + the lines Pi's
// read returns for the footer's offset/limit + tail rebuild the text; valid UTF-8 in, valid
// UTF-8 out; marker and footer say what the struct says; an unsaved artifact's path is never
// shown. A text within the limits comes back byte for byte.
//
// Input layout: byte 0 flags (bit 0: the artifact was saved; bit 1: a long path), bytes 1-2
// max_bytes (512 + 0..4095), byte 3 max_lines (8 + 0..247), byte 4 head_share (0.05..0.95),
// byte 5 the length of an artifact error text taken from the following bytes (control
// characters and invalid UTF-8 included), then the text. In the text, 0xFE k expands to a run
// of 1 KiB to 64 KiB of one character (1 to 4 bytes wide), so long lines and cuts inside
// multi-byte characters are reached within libFuzzer's input sizes.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <string_view>

#include "engine/text/projection.hpp"
#include "engine/text/projection_notice.hpp"
#include "engine/text/text_shape.hpp"
#include "utf8.hpp"
#include "projection_checks.hpp"

namespace {

using handoff::artifact_ref;
using handoff::projection_limits;

void on_failed_check(const doctest::AssertData& ad) {
  std::fprintf(stderr, "fuzz_projection: %s:%d: check failed: %s\n", ad.m_file, ad.m_line, ad.m_expr);
  if (ad.m_decomp.size() > 0) std::fprintf(stderr, "  with expansion: %s\n", ad.m_decomp.c_str());
  std::abort();
}

void require(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "fuzz_projection: invariant broken: %s\n", what);
  std::abort();
}

// Expanded texts stop growing here: larger ones add no new paths, only time per input.
constexpr std::size_t max_text_bytes = 256 * 1024;

// The text, with 0xFE k runs expanded.
std::string expand(std::string_view in) {
  static constexpr std::string_view units[] = {"x", "\xC3\xA9", "\xE4\xB8\xAD", "\xF0\x9F\x98\x80"};
  std::string out;
  for (std::size_t i = 0; i < in.size() && out.size() < max_text_bytes; ++i) {
    if (static_cast<unsigned char>(in[i]) != 0xFE || i + 1 == in.size()) {
      out.push_back(in[i]);
      continue;
    }
    const auto k = static_cast<unsigned char>(in[++i]);
    const std::string_view unit = units[k & 3];
    const std::size_t bytes = (static_cast<std::size_t>(k >> 2) + 1) * 1024;
    for (std::size_t n = 0; n < bytes / unit.size(); ++n) out.append(unit);
  }
  return out;
}

// project() may refuse a cut only when the limits cannot hold the notices plus some text
// (projection.cpp: 32 bytes and 2 lines of body beside notice_bound()).
bool may_refuse(std::string_view text, const projection_limits& limits, const artifact_ref& artifact) {
  const handoff::text_shape total = handoff::measure(text);
  const handoff::notice_size notices = handoff::footer_room_for(total, limits, artifact).notices;
  return limits.max_bytes < notices.bytes + 32 || limits.max_lines < notices.lines + 2;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  static doctest::Context context;
  context.setAsDefaultForAssertsOutOfTestCases();
  context.setAssertHandler(on_failed_check);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 6) return 0;
  projection_limits limits;
  limits.max_bytes = 512 + ((static_cast<std::size_t>(data[1]) << 8 | data[2]) & 0xfff);
  limits.max_lines = 8 + static_cast<std::size_t>(data[3] % 248);
  limits.head_share = std::min(0.95, 0.05 + 0.9 * data[4] / 255.0);  // 0.05 + 0.9 is 0.9500...01
  std::string_view rest(reinterpret_cast<const char*>(data) + 6, size - 6);

  artifact_ref artifact;
  artifact.sha256 = std::string(64, 'a');
  artifact.path = (data[0] & 2 ? "/home/someone/" + std::string(180, 'd') : std::string("/tmp/s")) + "/" +
                  artifact.sha256 + ".txt";
  artifact.saved = (data[0] & 1) != 0;
  if (!artifact.saved) {
    const std::size_t n = std::min<std::size_t>(data[5], rest.size());
    artifact.error = std::string(rest.substr(0, n));
    rest.remove_prefix(n);
    // The store's reasons are our own words and errno texts: UTF-8 (control characters may
    // occur; they must not break the footer's lines), and no U+FFFD, which the checks take as
    // a sign of a character cut in the text.
    if (!handoff::valid_utf8(artifact.error) || artifact.error.find("\xEF\xBF\xBD") != std::string::npos)
      artifact.error = "EIO: input/output error";
  }
  std::string text = expand(rest);
  // The checks find the marker by its words, so the text must not contain them (a text that
  // does is not cut differently; it only reads ambiguously).
  for (std::string_view words : {handoff::test::marker_prefix, handoff::test::footer_prefix})
    for (auto at = text.find(words); at != std::string::npos; at = text.find(words, at + 1)) text[at] = '(';

  handoff::projection p;
  try {
    p = handoff::project(text, limits, artifact);
  } catch (const std::invalid_argument& e) {
    if (handoff::fits(text, limits) || !may_refuse(text, limits, artifact)) {
      std::fprintf(stderr, "fuzz_projection: refused: %s\n", e.what());
      require(!handoff::fits(text, limits), "a text within the limits was refused");
      require(false, "a cut refused though the limits hold the notices");
    }
    return 0;
  }
  if (handoff::fits(text, limits)) {
    require(!p.truncated && p.text == text, "a text within the limits was changed");
    return 0;
  }
  require(p.truncated, "a text over the limits came back whole");
  handoff::test::check_cut(text, limits, artifact, p);
  return 0;
}
