// One shared budget per delivered batch (docs/design.md §5).
//
// A pure function: the surface's static caps, the results waiting (in completion order) and the
// parent's latest context usage -> a byte limit per admitted result, a line limit, the results
// deferred to a later flush, and a report of how it was decided.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace handoff {

// Static caps of one delivery surface. All bytes are UTF-8 bytes.
struct surface_caps {
  std::size_t per_result_bytes;  // one result's projection at most
  std::size_t per_batch_bytes;   // the whole rendered batch at most (wrappers included)
  std::size_t floor_bytes;       // no admitted result gets less than this
  std::size_t max_lines;         // one result's projection at most, lines

  // Auto-delivery when the parent goes idle: 24 KiB / 48 KiB / floor 2 KiB / 600 lines.
  static surface_caps auto_delivery() noexcept { return {24 * 1024, 48 * 1024, 2 * 1024, 600}; }
  // subagent/wait: 16 KiB / 48 KiB / floor 512 B / 600 lines.
  static surface_caps wait() noexcept { return {16 * 1024, 48 * 1024, 512, 600}; }
};

// The parent's context usage, the shape of Pi's ctx.getContextUsage().
struct context_usage {
  std::optional<std::int64_t> tokens;  // tokens in context; null right after compaction
  std::int64_t context_window = 0;     // the model's window, tokens; <= 0 means unknown
  std::optional<double> percent;       // tokens / window * 100, or null
};

// Dynamic-shrink parameters (docs/design.md §5: 50% of headroom at 4 bytes per token).
struct dynamic_policy {
  double headroom_share = 0.5;      // share of (contextWindow - tokens) a batch may use, (0, 1]
  std::size_t bytes_per_token = 4;  // conversion from tokens to UTF-8 bytes
};

// One result waiting in the batch, in completion order.
struct budget_item {
  std::size_t bytes = 0;          // full text size
  std::size_t lines = 1;          // full text lines (split("\n"))
  std::size_t wrapper_bytes = 0;  // rendered bytes around its projection: header line, title,
                                  // error text, separator before it
  std::size_t min_cut_bytes = 0;  // the least a cut of it can be (its marker and footer, which
                                  // grow with the artifact's path): the floor is raised to the
                                  // largest of these, within the per-result cap
};

struct budget_report {
  bool dynamic = false;                 // true when usage was valid and used
  std::string basis;                    // plain words: "dynamic: ..." or "static: <why>"
  std::size_t batch_cap_bytes = 0;      // effective cap on the rendered batch
  std::size_t static_batch_bytes = 0;   // the surface's static batch cap
  std::size_t per_result_bytes = 0;     // the surface's static per-result cap
  std::size_t floor_bytes = 0;          // the floor applied: the surface's, or raised for a
                                        // footer that needs more (budget_item::min_cut_bytes)
  std::size_t max_lines = 0;            // per-result line cap
  std::optional<context_usage> usage;   // the usage it was based on, when valid
  std::optional<std::size_t> headroom_bytes;  // share * (window - tokens) * bytes/token
};

struct allocation {
  std::vector<std::size_t> admitted;     // indices into the items, completion order
  std::vector<std::size_t> byte_limits;  // projection byte limit per admitted item (same order)
  std::size_t max_lines = 0;             // projection line limit for every admitted item
  std::vector<std::size_t> deferred;     // indices kept pending for the next flush
  budget_report report;
};

// True when usage can drive the dynamic budget: tokens present and >= 0, window > 0, tokens
// <= window, and percent (when present) finite and within [0, 100]. Anything else is unknown or
// nonsense and the static caps apply.
bool usable(const std::optional<context_usage>& usage) noexcept;

// Allocates the batch. Guarantees: sum(byte_limits) + sum(admitted wrapper_bytes) +
// deferred_notice_bytes (when anything is deferred) <= report.batch_cap_bytes, except that the
// first item is always admitted at >= its floor so a flush always makes progress (still within
// the static batch cap); every admitted limit >= floor_bytes and <= per_result_bytes; items
// that fit are given exactly what they need (water-filling), the rest share what is left.
// An item that fits and is smaller than the floor is given exactly its size (it is shown whole,
// so the floor, which bounds cuts, does not apply to it). `admitted` is always a prefix of the
// items (0, 1, ... k-1) and `deferred` the rest, so completion order is kept across flushes;
// when a cap raise was needed for the first item, report.batch_cap_bytes is the raised cap.
// Throws std::invalid_argument when the caps or policy are inconsistent (floor above a cap, a
// zero cap, share outside (0, 1]), or when the first item cannot be delivered at its floor even
// under the static batch cap (its wrapper alone is too large for the surface).
allocation allocate(const surface_caps& caps, std::span<const budget_item> items,
                    const std::optional<context_usage>& usage,
                    std::size_t deferred_notice_bytes, const dynamic_policy& policy = {});

}  // namespace handoff
