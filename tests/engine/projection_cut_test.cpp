// cut_body() (engine/text/projection_cut.hpp) with the newline index a heading scan keeps: the
// same cut as with memchr and memrchr, for every budget and share, with the index holding the
// budget's bytes or fewer (then it is not used where it does not reach).
#include "engine/text/projection_cut.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <random>
#include <string>

#include "engine/text/markdown_headings.hpp"
#include "engine/text/text_shape.hpp"

namespace {

// Lines of 0 to 200 bytes (many short ones, some empty, now and then one longer than a budget),
// ending in '\n' or not.
std::string random_lines(std::mt19937_64& draw, std::size_t bytes) {
  std::string text;
  while (text.size() < bytes) {
    const std::uint64_t kind = draw() % 20;
    const std::size_t length = kind == 0 ? 0 : kind == 1 ? 300 + draw() % 3000 : draw() % 90;
    text.append(length, static_cast<char>('a' + draw() % 26));
    text += '\n';
  }
  if (draw() % 2 == 0) text.pop_back();
  return text;
}

bool same(const handoff::body_cut& a, const handoff::body_cut& b) {
  return a.head_end == b.head_end && a.head_lines == b.head_lines && a.head_partial == b.head_partial &&
         a.tail_start == b.tail_start && a.tail_lines == b.tail_lines && a.tail_partial == b.tail_partial;
}

}  // namespace

TEST_CASE("a cut made with the scan's newline index is the cut made without it") {
  std::mt19937_64 draw(20261203);
  std::size_t compared = 0;
  for (int round = 0; round < 300; ++round) {
    const std::string text = random_lines(draw, 200 + draw() % 40000);
    const std::size_t lines = handoff::measure(text).lines;
    for (int budget_draw = 0; budget_draw < 12; ++budget_draw) {
      const handoff::body_budget budget{34 + draw() % 20000, 2 + draw() % 700};
      if (text.size() + 1 <= budget.bytes && lines <= budget.lines) continue;  // it would fit
      const double share = 0.05 + static_cast<double>(draw() % 91) / 100.0;
      // The edge a projection keeps (its max_bytes, at least the budget), or less.
      const std::size_t edge = draw() % 4 == 0 ? draw() % (budget.bytes + 1) : budget.bytes + draw() % 2000;
      const handoff::heading_scan scan = handoff::scan_headings(text, edge);
      const handoff::body_cut plain = handoff::cut_body(text, lines, budget, share);
      const handoff::body_cut indexed = handoff::cut_body(text, lines, budget, share, &scan.newlines);
      CAPTURE(round);
      CAPTURE(budget.bytes);
      CAPTURE(budget.lines);
      CAPTURE(share);
      CAPTURE(edge);
      REQUIRE(same(plain, indexed));
      ++compared;
    }
  }
  CHECK(compared > 2000);
}
