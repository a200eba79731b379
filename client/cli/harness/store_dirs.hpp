// The artifact stores a setup lets a harness's read tool read (Claude Code's Read rule,
// opencode's external_directory rule), and which rules of that kind are handoff's own.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace handoff::cli {

struct store_dirs {
  // The stores to allow, absolute, no trailing '/': `--artifact-dir` alone when given; else
  // handoffd's default store, and its former default while that exists as a directory (not a
  // symlink), since footers delivered before an upgrade name files there and handoffd still
  // serves them (docs/design.md §7). A setup run after the former one is gone drops its rule.
  std::vector<std::string> allow;
  // Every store whose rule is handoff's, to replace or take out: `allow`, the default and the
  // former default (whether they exist or not).
  std::vector<std::string> own;
};

// The stores for `named` (--artifact-dir, empty when not given); nullopt when none can be named
// (no HOME and no XDG_CACHE_HOME, and no --artifact-dir).
std::optional<store_dirs> stores_to_allow(const std::string& named);

}  // namespace handoff::cli
