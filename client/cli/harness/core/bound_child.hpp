// The bounding every hook harness does with a finished child's answer, written once: the
// siblings started (so the wait waits for them), the answer completed in handoffd, and one
// subagent/wait for it with the harness's reader, the parent's context use and the siblings as
// batchWith. What the harness does with the outcome (its frame, its file, its note) stays in
// its own folder.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cli/harness/core/hook_settings.hpp"
#include "engine/text/reader_profile.hpp"
#include "protocol/messages.hpp"

namespace handoff::cli::hook_core {

// A sibling: another subagent of the same turn (or step), still running or just finished, that
// shares this result's budget.
struct sibling {
  std::string id;     // its child id in handoffd
  std::string title;  // its description, "" when the harness knows none
};

// One finished child, as the harness read it from its event.
struct finished_child {
  std::string parent;                    // handoffd's parent id: the harness's session
  std::string child;                     // handoffd's child id: the call
  std::string title;                     // the call's description or agent name, may be ""
  std::string answer;                    // the child's exact final text
  std::vector<sibling> siblings;         // none: the wait is for this child alone
  std::optional<rpc::usage_dto> usage;   // the parent's context use, when known
  // Whose tools read the footer's calls, and the harness's own cut on one result
  // (reader_profile::result_bytes), which every section for it is held within.
  const reader_profile* reader = &pi_reader;
};

// What came of it.
struct bound_outcome {
  enum class kind {
    section,      // handoffd's section for this child: `section`
    held_back,    // its batch had no room for it: `text` is held_back_note(), the answer stays in handoffd
    not_bounded,  // handoffd answered, but with no section for it: `text` says why
    unreachable,  // no handoffd could be reached or started within the budget, or it refused: `text` says why
  };
  kind what = kind::unreachable;
  std::string text;
  rpc::section_dto section;  // when what == section
};

// True when `text` alone would pass a wait for `reader` unchanged with the default caps (16 KiB,
// 600 lines, less the harness's frame and indent): such an answer with no sibling needs no daemon.
bool fits_alone(const std::string& text, const reader_profile& reader);

// Completes `c` in handoffd (starting one if none runs, within settings.connect_budget) and waits
// for its section: up to settings.siblings_wait when it has siblings, else connect_budget.
// Never throws for anything handoffd does: a failure comes back as `unreachable` with the reason.
bound_outcome bound_child(const finished_child& c, const hook_settings& settings);

// For an outcome that is neither a section nor held back, the reason the one line gives:
// "handoff's daemon was not reached (WHAT)" or "handoffd did not bound this result (WHY)".
std::string why_not_bounded(const bound_outcome& outcome);

}  // namespace handoff::cli::hook_core
