// The batch budget allocator (docs/design.md §5; budget.hpp states the guarantees).
//
// Three deterministic steps:
//  1. The batch cap: the surface's static cap, or min(static cap, share * free tokens *
//     bytes/token) when the parent's usage can be trusted.
//  2. Admission, in completion order. Each result costs at least its wrapper plus the lesser of
//     what it needs and the floor. When the whole batch does not fit at that cost, a deferred
//     notice is reserved and the longest prefix that still fits is admitted; the rest waits for
//     the next flush. The first result is admitted even under a tiny dynamic cap (the cap is
//     raised to just hold it, never above the static cap) so that every flush makes progress.
//  3. Water-filling of what is left after wrappers and notice: results needing less than the
//     fair share take exactly what they need, the others share the rest equally.
#include "engine/text/budget.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numeric>
#include <stdexcept>

namespace handoff {
namespace {

constexpr std::size_t size_max = std::numeric_limits<std::size_t>::max();

// Sizes come from clients (wrapper bytes include their strings): sums saturate, never wrap.
std::size_t add_sat(std::size_t a, std::size_t b) noexcept {
  return a > size_max - b ? size_max : a + b;
}

// 49152 -> "49,152": the basis is read by people.
std::string grouped(std::size_t n) {
  std::string digits = std::to_string(n);
  std::string out;
  out.reserve(digits.size() + digits.size() / 3);
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i != 0 && (digits.size() - i) % 3 == 0) out.push_back(',');
    out.push_back(digits[i]);
  }
  return out;
}
std::string grouped(std::int64_t n) {
  if (n >= 0) return grouped(static_cast<std::size_t>(n));
  // Appended rather than `"-" + s`: g++ 12 at -O3 (Release) flags that insert as an
  // overlapping memcpy (-Wrestrict, GCC bug 105329), which -Werror turns into a failed build.
  std::string out = "-";
  out += grouped(static_cast<std::size_t>(-(n + 1)) + 1);
  return out;
}

// 0.5 -> "50%", 0.125 -> "12.5%".
std::string percent_text(double share) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g%%", share * 100.0);
  return buf;
}

// What is wrong with a usage report, if anything. Anything Pi would not report for a live
// session counts as nonsense: a budget built on it would be invented.
enum class usage_fault { none, missing, tokens_null, window, negative, over_window, percent };

usage_fault fault_of(const std::optional<context_usage>& usage) noexcept {
  if (!usage) return usage_fault::missing;
  const context_usage& u = *usage;
  if (!u.tokens) return usage_fault::tokens_null;
  if (u.context_window <= 0) return usage_fault::window;
  if (*u.tokens < 0) return usage_fault::negative;
  if (*u.tokens > u.context_window) return usage_fault::over_window;
  if (u.percent && !(std::isfinite(*u.percent) && *u.percent >= 0.0 && *u.percent <= 100.0))
    return usage_fault::percent;
  return usage_fault::none;
}

// Plain words for a fault, with the values that caused it.
std::string describe(usage_fault fault, const std::optional<context_usage>& usage) {
  switch (fault) {
    case usage_fault::none: break;
    case usage_fault::missing: return "usage unknown (the parent reported none)";
    case usage_fault::tokens_null: return "usage unknown (tokens null, as right after compaction)";
    case usage_fault::window:
      return "usage unusable (context window " + grouped(usage->context_window) +
             " is not positive)";
    case usage_fault::negative:
      return "usage unusable (negative token count " + grouped(*usage->tokens) + ")";
    case usage_fault::over_window:
      return "usage unusable (" + grouped(*usage->tokens) + " tokens exceed the " +
             grouped(usage->context_window) + "-token window)";
    case usage_fault::percent: return "usage unusable (percent is not a number in [0, 100])";
  }
  return "usage usable";
}

void validate(const surface_caps& caps, const dynamic_policy& policy) {
  if (caps.per_result_bytes == 0 || caps.per_batch_bytes == 0 || caps.max_lines == 0)
    throw std::invalid_argument("budget: surface caps must be positive");
  if (caps.floor_bytes > caps.per_result_bytes || caps.floor_bytes > caps.per_batch_bytes)
    throw std::invalid_argument("budget: the floor exceeds the per-result or per-batch cap");
  if (!(policy.headroom_share > 0.0 && policy.headroom_share <= 1.0))
    throw std::invalid_argument("budget: headroom share must be in (0, 1]");
  if (policy.bytes_per_token == 0)
    throw std::invalid_argument("budget: bytes per token must be positive");
}

// share * free_tokens * bytes_per_token, rounded down, saturating at size_max.
std::size_t headroom_bytes(std::int64_t free_tokens, const dynamic_policy& policy) noexcept {
  const double bytes = std::floor(policy.headroom_share * static_cast<double>(free_tokens) *
                                  static_cast<double>(policy.bytes_per_token));
  constexpr double limit = static_cast<double>(size_max);  // rounds up to 2^64
  return bytes >= limit ? size_max : static_cast<std::size_t>(bytes);
}

// What one result needs: its whole size when it is shown verbatim, else the per-result cap
// (its projection is cut anyway; more never hurts it, and the cap bounds it).
std::size_t need_of(const budget_item& item, const surface_caps& caps) noexcept {
  const bool fits = item.bytes <= caps.per_result_bytes && item.lines <= caps.max_lines;
  return fits ? item.bytes : caps.per_result_bytes;
}

// Step 3: shares `body` among `needs`; returns one limit per need. Precondition: body >= the sum of
// min(need, floor), which makes every limit below its need (a cut) at least the floor. The
// division remainder (< one byte per cut result) stays unused so equal results get equal limits.
std::vector<std::size_t> water_fill(const std::vector<std::size_t>& needs, std::size_t body) {
  std::vector<std::size_t> order(needs.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return needs[a] < needs[b]; });
  std::vector<std::size_t> limits(needs.size());
  std::size_t remaining = body;
  std::size_t left = needs.size();
  for (std::size_t k = 0; k < order.size(); ++k, --left) {
    const std::size_t fair = remaining / left;
    const std::size_t i = order[k];
    if (needs[i] <= fair) {
      limits[i] = needs[i];
      remaining -= needs[i];
      continue;
    }
    // Every later need is at least this one, so all of them are cut at the same level.
    for (std::size_t j = k; j < order.size(); ++j) limits[order[j]] = fair;
    break;
  }
  return limits;
}

// Step 1: the effective batch cap, and the report's account of it.
std::size_t batch_cap(const surface_caps& caps, const std::optional<context_usage>& usage,
                      const dynamic_policy& policy, budget_report& report) {
  const std::size_t static_cap = caps.per_batch_bytes;
  if (const usage_fault fault = fault_of(usage); fault != usage_fault::none) {
    report.basis = "static: " + describe(fault, usage) + "; batch cap " + grouped(static_cap) +
                   " B";
    return static_cap;
  }
  const std::int64_t free_tokens = usage->context_window - *usage->tokens;
  const std::size_t headroom = headroom_bytes(free_tokens, policy);
  report.dynamic = true;
  report.usage = usage;
  report.headroom_bytes = headroom;
  report.basis = "dynamic: " + percent_text(policy.headroom_share) + " of " +
                 grouped(free_tokens) + " free tokens x " + grouped(policy.bytes_per_token) +
                 " B = " + grouped(headroom) + " B";
  if (headroom >= static_cap)
    report.basis += ", not below the static batch cap of " + grouped(static_cap) +
                    " B, which holds";
  return std::min(static_cap, headroom);
}

// Step 2's outcome: items [0, admitted) go out now, the rest wait.
struct admission {
  std::size_t admitted = 0;
  bool deferring = false;  // something waits, so the notice is part of the batch
  std::size_t cap = 0;     // the batch cap, raised when the first item needed it
};

// Step 2: the longest prefix whose minimum costs (plus the notice, when not everything fits)
// stay under `cap`; at least the first item, raising the cap up to the static one for it.
admission admit(std::span<const std::size_t> min_costs, std::size_t cap,
                std::size_t notice_bytes, const surface_caps& caps, std::size_t first_wrapper) {
  const std::size_t n = min_costs.size();
  std::size_t total = 0;
  for (std::size_t cost : min_costs) total = add_sat(total, cost);
  if (total <= cap) return {n, false, cap};

  std::size_t admitted = 0;
  std::size_t used = 0;
  while (admitted < n && add_sat(add_sat(used, min_costs[admitted]), notice_bytes) <= cap)
    used += min_costs[admitted++];
  if (admitted > 0) return {admitted, true, cap};

  // Progress: the first item goes out at its floor even when the (dynamic) cap is smaller.
  const bool deferring = n > 1;
  const std::size_t required = add_sat(min_costs[0], deferring ? notice_bytes : 0);
  if (required > caps.per_batch_bytes)
    throw std::invalid_argument("budget: the first result needs " + grouped(required) +
                                " B (wrapper " + grouped(first_wrapper) +
                                " B, floor, notice), more than the static batch cap of " +
                                grouped(caps.per_batch_bytes) + " B");
  return {1, deferring, required};
}

}  // namespace

bool usable(const std::optional<context_usage>& usage) noexcept {
  return fault_of(usage) == usage_fault::none;
}

allocation allocate(const surface_caps& surface, std::span<const budget_item> items,
                    const std::optional<context_usage>& usage,
                    std::size_t deferred_notice_bytes, const dynamic_policy& policy) {
  validate(surface, policy);
  // A floor that cannot hold a result's footer (a long artifact path) is raised for the batch:
  // below it the projection could not be cut at all.
  surface_caps caps = surface;
  for (const budget_item& item : items)
    caps.floor_bytes = std::max(caps.floor_bytes,
                                std::min({item.min_cut_bytes, caps.per_result_bytes, caps.per_batch_bytes}));
  allocation out;
  out.max_lines = caps.max_lines;
  budget_report& report = out.report;
  report.static_batch_bytes = caps.per_batch_bytes;
  report.per_result_bytes = caps.per_result_bytes;
  report.floor_bytes = caps.floor_bytes;
  report.max_lines = caps.max_lines;

  const std::size_t cap = batch_cap(caps, usage, policy, report);
  if (caps.floor_bytes > surface.floor_bytes)
    report.basis += "; floor raised from " + grouped(surface.floor_bytes) + " to " + grouped(caps.floor_bytes) +
                    " B to hold a footer";

  const std::size_t n = items.size();
  std::vector<std::size_t> needs(n);
  std::vector<std::size_t> min_costs(n);
  for (std::size_t i = 0; i < n; ++i) {
    needs[i] = need_of(items[i], caps);
    min_costs[i] = add_sat(items[i].wrapper_bytes, std::min(needs[i], caps.floor_bytes));
  }
  const admission adm =
      admit(min_costs, cap, deferred_notice_bytes, caps, n ? items[0].wrapper_bytes : 0);
  report.batch_cap_bytes = adm.cap;
  if (adm.cap > cap)
    report.basis += "; raised to " + grouped(adm.cap) + " B so the first result goes out";
  if (adm.deferring)
    report.basis += "; " + grouped(n - adm.admitted) + " of " + grouped(n) +
                    " results deferred to the next flush";

  // Admission guarantees that these subtractions cannot wrap.
  std::size_t body = adm.cap - (adm.deferring ? deferred_notice_bytes : 0);
  for (std::size_t i = 0; i < adm.admitted; ++i) body -= items[i].wrapper_bytes;
  needs.resize(adm.admitted);
  out.byte_limits = water_fill(needs, body);
  out.admitted.resize(adm.admitted);
  std::iota(out.admitted.begin(), out.admitted.end(), std::size_t{0});
  out.deferred.resize(n - adm.admitted);
  std::iota(out.deferred.begin(), out.deferred.end(), adm.admitted);
  return out;
}

}  // namespace handoff
