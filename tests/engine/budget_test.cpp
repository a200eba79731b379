// The batch budget allocator (contract 3), as a pure function: no projection, no files.
#include "engine/text/budget.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using handoff::allocate;
using handoff::allocation;
using handoff::budget_item;
using handoff::context_usage;
using handoff::surface_caps;

constexpr std::size_t kib = 1024;

std::optional<context_usage> usage_of(std::int64_t tokens, std::int64_t window) {
  return context_usage{tokens, window, 100.0 * static_cast<double>(tokens) /
                                           static_cast<double>(window)};
}

// Bytes the rendered batch can take at most under this allocation.
std::size_t worst_case_bytes(const allocation& a, const std::vector<budget_item>& items,
                             std::size_t notice) {
  std::size_t total = a.deferred.empty() ? 0 : notice;
  for (std::size_t k = 0; k < a.admitted.size(); ++k)
    total += a.byte_limits[k] + items[a.admitted[k]].wrapper_bytes;
  return total;
}

bool same(const allocation& a, const allocation& b) {
  return a.admitted == b.admitted && a.byte_limits == b.byte_limits &&
         a.deferred == b.deferred && a.max_lines == b.max_lines &&
         a.report.basis == b.report.basis && a.report.batch_cap_bytes == b.report.batch_cap_bytes &&
         a.report.dynamic == b.report.dynamic && a.report.headroom_bytes == b.report.headroom_bytes;
}

// The seed's wait smoke: 4 results of 21,333 bytes / 262 lines; wrappers like
// `Subagent c1 "smoke 1" finished.\n\n` plus the separator before all but the first.
std::vector<budget_item> seed_items() {
  return {{21333, 262, 38}, {21333, 262, 45}, {21333, 262, 45}, {21333, 262, 45}};
}

}  // namespace

TEST_CASE("surface caps are the documented defaults") {
  const surface_caps a = surface_caps::auto_delivery();
  CHECK(a.per_result_bytes == 24 * kib);
  CHECK(a.per_batch_bytes == 48 * kib);
  CHECK(a.floor_bytes == 2 * kib);
  CHECK(a.max_lines == 600);
  const surface_caps w = surface_caps::wait();
  CHECK(w.per_result_bytes == 16 * kib);
  CHECK(w.per_batch_bytes == 48 * kib);
  CHECK(w.floor_bytes == 512);
  CHECK(w.max_lines == 600);
}

TEST_CASE("seed smoke: 4 x 21,333 B on wait share 48 KiB equally") {
  const auto items = seed_items();
  const allocation a = allocate(surface_caps::wait(), items, std::nullopt, 100);
  REQUIRE(a.admitted == std::vector<std::size_t>{0, 1, 2, 3});
  CHECK(a.deferred.empty());
  CHECK(a.max_lines == 600);
  // (49,152 - 173 wrapper bytes) / 4, the remainder left unused so the shares stay equal.
  const std::size_t share = (49152 - 173) / 4;
  CHECK(a.byte_limits == std::vector<std::size_t>(4, share));
  CHECK(worst_case_bytes(a, items, 100) <= 49152);
  CHECK(a.report.batch_cap_bytes == 49152);
  CHECK_FALSE(a.report.dynamic);
}

TEST_CASE("ample headroom: dynamic, but the static caps still hold") {
  const auto items = seed_items();
  const allocation a = allocate(surface_caps::wait(), items, usage_of(10'000, 200'000), 100);
  CHECK(a.report.dynamic);
  REQUIRE(a.report.headroom_bytes);
  CHECK(*a.report.headroom_bytes == 380'000);  // 50% of 190,000 tokens x 4 B
  CHECK(a.report.batch_cap_bytes == 49152);
  CHECK(a.report.basis.find("dynamic: 50% of 190,000 free tokens x 4 B = 380,000 B") == 0);
  CHECK(a.byte_limits == std::vector<std::size_t>(4, (49152 - 173) / 4));
  REQUIRE(a.report.usage);
  CHECK(a.report.usage->tokens == 10'000);
}

TEST_CASE("dynamic cap: 50% of the free tokens at 4 B, minus wrappers, shared") {
  const auto items = seed_items();
  const allocation a = allocate(surface_caps::wait(), items, usage_of(188'000, 200'000), 100);
  CHECK(a.report.dynamic);
  CHECK(a.report.batch_cap_bytes == 24'000);
  CHECK(a.report.basis == "dynamic: 50% of 12,000 free tokens x 4 B = 24,000 B");
  CHECK(a.byte_limits == std::vector<std::size_t>(4, (24'000 - 173) / 4));
  CHECK(worst_case_bytes(a, items, 100) <= 24'000);
}

TEST_CASE("falling headroom shrinks every share, deterministically") {
  const auto items = seed_items();
  const surface_caps caps = surface_caps::wait();
  std::vector<std::size_t> previous = allocate(caps, items, std::nullopt, 100).byte_limits;
  std::size_t previous_cap = caps.per_batch_bytes;
  std::size_t previous_admitted = items.size();
  std::size_t strict_drops = 0;
  for (std::int64_t tokens = 150'000; tokens <= 200'000; tokens += 1'000) {
    const auto usage = usage_of(tokens, 200'000);
    const allocation a = allocate(caps, items, usage, 100);
    CHECK(same(a, allocate(caps, items, usage, 100)));
    CHECK(worst_case_bytes(a, items, 100) <= a.report.batch_cap_bytes);
    CHECK(a.report.batch_cap_bytes <= previous_cap);
    CHECK(a.admitted.size() <= previous_admitted);
    CHECK(a.admitted.size() >= 1);
    if (a.deferred.empty()) {
      // Everyone is admitted: each share shrinks with the headroom, never grows.
      for (std::size_t i = 0; i < 4; ++i) {
        CHECK(a.byte_limits[i] <= previous[i]);
        CHECK(a.byte_limits[i] >= caps.floor_bytes);
      }
      if (a.byte_limits[0] < previous[0]) ++strict_drops;
      previous = a.byte_limits;
    }
    previous_cap = a.report.batch_cap_bytes;
    previous_admitted = a.admitted.size();
  }
  // From 176,000 to 198,000 tokens the dynamic cap is below the static one and everyone is
  // admitted: each 1,000-token step costs 2,000 B of cap, so 23 strictly smaller shares.
  CHECK(strict_drops == 23);
  CHECK(previous_admitted == 1);  // a full context still delivers one result
}

TEST_CASE("unknown or nonsense usage falls back to the static caps and says why") {
  struct case_t {
    const char* name;
    std::optional<context_usage> usage;
    const char* reason;
  };
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<case_t> cases = {
      {"no answer", std::nullopt, "static: usage unknown (the parent reported none)"},
      {"tokens null", context_usage{std::nullopt, 200'000, std::nullopt},
       "static: usage unknown (tokens null, as right after compaction)"},
      {"window 0", context_usage{1'000, 0, std::nullopt},
       "static: usage unusable (context window 0 is not positive)"},
      {"window negative", context_usage{1'000, -5, std::nullopt},
       "static: usage unusable (context window -5 is not positive)"},
      {"tokens negative", context_usage{-1, 200'000, std::nullopt},
       "static: usage unusable (negative token count -1)"},
      {"tokens > window", context_usage{250'000, 200'000, 125.0},
       "static: usage unusable (250,000 tokens exceed the 200,000-token window)"},
      {"percent NaN", context_usage{1'000, 200'000, nan},
       "static: usage unusable (percent is not a number in [0, 100])"},
      {"percent absurd", context_usage{1'000, 200'000, 1e9},
       "static: usage unusable (percent is not a number in [0, 100])"},
  };
  const auto items = seed_items();
  const allocation reference = allocate(surface_caps::wait(), items, std::nullopt, 100);
  for (const case_t& c : cases) {
    CAPTURE(c.name);
    CHECK_FALSE(handoff::usable(c.usage));
    const allocation a = allocate(surface_caps::wait(), items, c.usage, 100);
    CHECK_FALSE(a.report.dynamic);
    CHECK(a.report.basis == std::string(c.reason) + "; batch cap 49,152 B");
    CHECK_FALSE(a.report.usage);
    CHECK_FALSE(a.report.headroom_bytes);
    CHECK(a.report.batch_cap_bytes == 49152);
    CHECK(a.report.static_batch_bytes == 49152);
    CHECK(a.report.per_result_bytes == 16 * kib);
    CHECK(a.report.floor_bytes == 512);
    CHECK(a.report.max_lines == 600);
    CHECK(a.byte_limits == reference.byte_limits);
  }
  CHECK(handoff::usable(context_usage{0, 1, std::nullopt}));
  CHECK(handoff::usable(context_usage{200'000, 200'000, 100.0}));
}

TEST_CASE("water-filling: small results take what they need, long ones share the rest") {
  // Cap 20,000 B (50% of 10,000 free tokens x 4 B), 4 x 100 B wrappers -> 19,600 B of bodies.
  // The short ones come last in completion order: limits follow the items, not the sort.
  const std::vector<budget_item> items = {
      {100'000, 2'000, 100}, {1'000, 10, 100}, {100'000, 2'000, 100}, {3'000, 30, 100}};
  const allocation a = allocate(surface_caps::wait(), items, usage_of(90'000, 100'000), 100);
  CHECK(a.deferred.empty());
  // 1,000 and 3,000 are under the fair share; (19,600 - 4,000) / 2 = 7,800 each for the rest.
  CHECK(a.byte_limits == std::vector<std::size_t>{7'800, 1'000, 7'800, 3'000});
  CHECK(worst_case_bytes(a, items, 100) == 20'000);
}

TEST_CASE("water-filling: results that fit are never given more than their size") {
  const std::vector<budget_item> items = {{5'000, 50, 40}, {700, 7, 40}, {16 * kib, 600, 40}};
  const allocation a = allocate(surface_caps::wait(), items, std::nullopt, 100);
  CHECK(a.byte_limits == std::vector<std::size_t>{5'000, 700, 16 * kib});
}

TEST_CASE("a result that fits verbatim but is squeezed is cut like the long ones") {
  // 9,000 B would be shown whole, but the fair share of 19,700 B among three is 6,566 B.
  const std::vector<budget_item> items = {{9'000, 100, 100}, {100'000, 900, 100}, {60'000, 80, 100}};
  const allocation a = allocate(surface_caps::wait(), items, usage_of(90'000, 100'000), 100);
  CHECK(a.byte_limits == std::vector<std::size_t>(3, 19'700 / 3));
}

TEST_CASE("too many lines makes a small result want the full per-result cap") {
  // 5,000 B in 700 lines breaks the 600-line cap, so it is cut and shares like a long one.
  const std::vector<budget_item> items = {{5'000, 700, 0}, {100'000, 100, 0}};
  const allocation a = allocate(surface_caps::wait(), items, usage_of(92'500, 100'000), 0);
  CHECK(a.report.batch_cap_bytes == 15'000);
  CHECK(a.byte_limits == std::vector<std::size_t>{7'500, 7'500});
}

TEST_CASE("the floor holds: a tight cap defers instead of cutting below it") {
  // Auto surface, 10 x 40 KiB, cap 20,000 B: ten floors (+ wrappers) would need 21,480 B.
  const std::vector<budget_item> items(10, budget_item{40 * kib, 500, 100});
  const allocation a = allocate(surface_caps::auto_delivery(), items, usage_of(90'000, 100'000),
                                100);
  CHECK(a.admitted.size() == 9);
  CHECK(a.deferred == std::vector<std::size_t>{9});
  for (std::size_t limit : a.byte_limits) CHECK(limit >= 2 * kib);
  CHECK(a.byte_limits == std::vector<std::size_t>(9, (20'000 - 100 - 900) / 9));
  CHECK(worst_case_bytes(a, items, 100) <= 20'000);
  CHECK(a.report.basis.find("; 1 of 10 results deferred to the next flush") != std::string::npos);
}

TEST_CASE("30 long results on auto-delivery: admit what fits at the floor, defer the rest") {
  const std::size_t wrapper = 60;
  const std::size_t notice = 96;
  const std::vector<budget_item> items(30, budget_item{40 * kib, 800, wrapper});
  const surface_caps caps = surface_caps::auto_delivery();
  const allocation a = allocate(caps, items, std::nullopt, notice);
  const std::size_t k = a.admitted.size();
  // The largest prefix whose floors, wrappers and the notice fit under 48 KiB: 23.
  CHECK(k == 23);
  CHECK(k * (caps.floor_bytes + wrapper) + notice <= 49152);
  CHECK((k + 1) * (caps.floor_bytes + wrapper) + notice > 49152);
  for (std::size_t i = 0; i < k; ++i) {
    CHECK(a.admitted[i] == i);
    CHECK(a.byte_limits[i] >= caps.floor_bytes);
    CHECK(a.byte_limits[i] <= caps.per_result_bytes);
  }
  REQUIRE(a.deferred.size() == 30 - k);
  for (std::size_t j = 0; j < a.deferred.size(); ++j) CHECK(a.deferred[j] == k + j);
  CHECK(worst_case_bytes(a, items, notice) <= 49152);
}

TEST_CASE("a near-full context still delivers the first result at its floor") {
  const surface_caps caps = surface_caps::auto_delivery();
  SUBCASE("alone") {
    const std::vector<budget_item> items = {{40 * kib, 800, 50}};
    const allocation a = allocate(caps, items, usage_of(199'990, 200'000), 100);
    CHECK(a.report.dynamic);
    CHECK(*a.report.headroom_bytes == 20);
    CHECK(a.admitted == std::vector<std::size_t>{0});
    CHECK(a.byte_limits == std::vector<std::size_t>{2 * kib});
    CHECK(a.deferred.empty());
    CHECK(a.report.batch_cap_bytes == 2 * kib + 50);  // no notice: nothing deferred
    CHECK(a.report.basis.find("raised to 2,098 B") != std::string::npos);
  }
  SUBCASE("with others waiting, full window") {
    const std::vector<budget_item> items(3, budget_item{40 * kib, 800, 50});
    const allocation a = allocate(caps, items, usage_of(200'000, 200'000), 100);
    CHECK(*a.report.headroom_bytes == 0);
    CHECK(a.admitted == std::vector<std::size_t>{0});
    CHECK(a.byte_limits == std::vector<std::size_t>{2 * kib});
    CHECK(a.deferred == std::vector<std::size_t>{1, 2});
    CHECK(a.report.batch_cap_bytes == 2 * kib + 50 + 100);
    CHECK(worst_case_bytes(a, items, 100) == a.report.batch_cap_bytes);
  }
  SUBCASE("a small first result is shown whole, not padded to the floor") {
    const std::vector<budget_item> items = {{300, 3, 50}};
    const allocation a = allocate(caps, items, usage_of(200'000, 200'000), 100);
    CHECK(a.byte_limits == std::vector<std::size_t>{300});
    CHECK(a.report.batch_cap_bytes == 350);
  }
}

TEST_CASE("results smaller than the floor cost only their size when admitting") {
  // Cap 3,000 B on auto: a 2 KiB floor plus three 200 B results fit; floors for all would not.
  const std::vector<budget_item> items = {
      {40 * kib, 800, 0}, {200, 2, 0}, {200, 2, 0}, {200, 2, 0}};
  const allocation a = allocate(surface_caps::auto_delivery(), items, usage_of(98'500, 100'000),
                                0);
  CHECK(a.report.batch_cap_bytes == 3'000);
  CHECK(a.deferred.empty());
  CHECK(a.byte_limits == std::vector<std::size_t>{2'400, 200, 200, 200});
}

TEST_CASE("no items: an empty allocation with a full report") {
  const allocation a = allocate(surface_caps::wait(), {}, usage_of(1'000, 2'000), 100);
  CHECK(a.admitted.empty());
  CHECK(a.deferred.empty());
  CHECK(a.byte_limits.empty());
  CHECK(a.report.batch_cap_bytes == 2'000);
  CHECK(a.report.max_lines == 600);
}

TEST_CASE("an enormous first wrapper is refused, never delivered over the static cap") {
  const std::vector<budget_item> items = {{100, 1, 49152}};
  CHECK_THROWS_AS(allocate(surface_caps::wait(), items, std::nullopt, 100),
                  std::invalid_argument);
  // A later item with a huge wrapper is simply deferred behind the first.
  const std::vector<budget_item> two = {{100, 1, 40}, {100, 1, 1'000'000}};
  const allocation a = allocate(surface_caps::wait(), two, std::nullopt, 100);
  CHECK(a.admitted == std::vector<std::size_t>{0});
  CHECK(a.deferred == std::vector<std::size_t>{1});
  // Wrapper sizes near SIZE_MAX saturate instead of wrapping around.
  const std::size_t huge = std::numeric_limits<std::size_t>::max() - 10;
  const std::vector<budget_item> wrap = {{100, 1, 40}, {100, 1, huge}, {100, 1, huge}};
  const allocation b = allocate(surface_caps::wait(), wrap, std::nullopt, 100);
  CHECK(b.admitted == std::vector<std::size_t>{0});
  CHECK(b.deferred == std::vector<std::size_t>{1, 2});
}

TEST_CASE("inconsistent caps or policy are refused") {
  const std::vector<budget_item> items = {{100, 1, 10}};
  surface_caps caps = surface_caps::wait();
  caps.floor_bytes = caps.per_result_bytes + 1;
  CHECK_THROWS_AS(allocate(caps, items, std::nullopt, 0), std::invalid_argument);
  caps = surface_caps::wait();
  caps.max_lines = 0;
  CHECK_THROWS_AS(allocate(caps, items, std::nullopt, 0), std::invalid_argument);
  for (double share : {0.0, -0.5, 1.5, std::numeric_limits<double>::quiet_NaN()}) {
    CAPTURE(share);
    CHECK_THROWS_AS(allocate(surface_caps::wait(), items, std::nullopt, 0, {share, 4}),
                    std::invalid_argument);
  }
  CHECK_THROWS_AS(allocate(surface_caps::wait(), items, std::nullopt, 0, {0.5, 0}),
                  std::invalid_argument);
}

TEST_CASE("the policy parameters drive the dynamic cap") {
  const std::vector<budget_item> items = {{100'000, 10, 0}};
  const allocation a =
      allocate(surface_caps::wait(), items, usage_of(99'000, 100'000), 0, {0.25, 3});
  CHECK(*a.report.headroom_bytes == 750);  // 25% of 1,000 tokens x 3 B
  CHECK(a.report.basis == "dynamic: 25% of 1,000 free tokens x 3 B = 750 B");
  CHECK(a.byte_limits == std::vector<std::size_t>{750});
}

TEST_CASE("property: random batches keep every guarantee") {
  std::mt19937_64 rng(20240611);
  auto pick = [&](std::size_t lo, std::size_t hi) {
    return std::uniform_int_distribution<std::size_t>(lo, hi)(rng);
  };
  for (int round = 0; round < 3000; ++round) {
    const surface_caps caps = round % 2 ? surface_caps::auto_delivery() : surface_caps::wait();
    std::vector<budget_item> items(pick(1, 40));
    for (budget_item& it : items) {
      it.bytes = pick(0, 3) == 0 ? pick(0, 3000) : pick(0, 200'000);
      it.lines = pick(1, 1200);
      it.wrapper_bytes = pick(20, 1500);
      it.min_cut_bytes = pick(0, 3) == 0 ? pick(400, 3000) : 0;  // now and then a footer over the floor
    }
    std::optional<context_usage> usage;
    if (pick(0, 4) != 0) {
      const auto window = static_cast<std::int64_t>(pick(1, 400'000));
      usage = usage_of(static_cast<std::int64_t>(pick(0, static_cast<std::size_t>(window))),
                       window);
    }
    const std::size_t notice = pick(0, 200);
    const allocation a = allocate(caps, items, usage, notice);
    CAPTURE(round);
    REQUIRE(!a.admitted.empty());
    REQUIRE(a.admitted.size() + a.deferred.size() == items.size());
    CHECK(a.report.batch_cap_bytes <= caps.per_batch_bytes);
    CHECK(worst_case_bytes(a, items, notice) <= a.report.batch_cap_bytes);
    std::size_t level = 0;
    std::size_t cut = 0;
    std::size_t unused = a.report.batch_cap_bytes - worst_case_bytes(a, items, notice);
    for (std::size_t k = 0; k < a.admitted.size(); ++k) {
      REQUIRE(a.admitted[k] == k);
      const budget_item& it = items[k];
      const bool fits = it.bytes <= caps.per_result_bytes && it.lines <= caps.max_lines;
      const std::size_t need = fits ? it.bytes : caps.per_result_bytes;
      const std::size_t limit = a.byte_limits[k];
      CHECK(limit <= need);
      if (limit < need) {  // cut: at the floor or above, all cut ones at one level
        CHECK(limit >= caps.floor_bytes);
        CHECK(limit >= a.report.floor_bytes);
        CHECK(limit >= std::min(it.min_cut_bytes, caps.per_result_bytes));  // its footer fits
        if (cut++ == 0) level = limit;
        CHECK(limit == level);
      }
    }
    for (std::size_t j = 0; j < a.deferred.size(); ++j)
      CHECK(a.deferred[j] == a.admitted.size() + j);
    // Water-filling wastes less than one byte per cut result (the division remainder), unless
    // the forced first result alone set the cap.
    if (cut > 0) CHECK(unused < cut);
  }
}

TEST_CASE("a result whose footer needs more than the floor raises the floor for the batch, within the caps") {
  // Two long results in a nearly full context: the first goes out at the floor. Its footer (a
  // long artifact path) needs 700 B, more than the wait surface's 512.
  std::vector<budget_item> items = {{90000, 2001, 30, 700}, {90000, 2001, 35, 650}};
  const allocation a = allocate(surface_caps::wait(), items, usage_of(199'990, 200'000), 90);
  REQUIRE(a.admitted == std::vector<std::size_t>{0});
  CHECK(a.byte_limits[0] == 700);
  CHECK(a.report.floor_bytes == 700);
  CHECK(a.report.basis.find("floor raised from 512 to 700 B to hold a footer") != std::string::npos);
  CHECK(worst_case_bytes(a, items, 90) <= a.report.batch_cap_bytes);

  // Ample room: the raised floor changes nothing for results that get more anyway.
  const allocation roomy = allocate(surface_caps::wait(), items, std::nullopt, 90);
  CHECK(roomy.admitted.size() == 2);
  for (const std::size_t limit : roomy.byte_limits) CHECK(limit > 700);

  // Never above the per-result cap: a footer that cannot fit even there is project()'s to refuse.
  surface_caps tight = surface_caps::wait();
  tight.per_result_bytes = 600;
  CHECK(allocate(tight, items, std::nullopt, 90).report.floor_bytes == 600);

  // A result that needs no cut (min_cut_bytes 0) leaves the floor alone.
  const std::vector<budget_item> plain = {{90000, 2001, 30}};
  CHECK(allocate(surface_caps::wait(), plain, usage_of(199'990, 200'000), 90).report.floor_bytes == 512);
}
