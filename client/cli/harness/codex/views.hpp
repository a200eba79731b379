// What the tools show of the children, from the children class's state (under its lock):
// subagent_check's view of one turn, and subagent_list's lines.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "cli/harness/codex/turn.hpp"

namespace handoff::cli::codex {

// A turn as the tools show it.
struct turn_view {
  std::string id;
  std::string title;
  codex::phase phase = phase::queued;
  std::string status;   // done / error once finished
  std::string preview;  // latest activity, at most 2 KiB
  std::string error;    // why, when status is error
};

// Ids (or anything) as the notes name them: "a, b, c".
std::string joined(const std::vector<std::string>& ids);

// The turn `id` names in `c`: `ID.N` that turn, the child's id (or an unknown `ID.N`) its latest.
// nullopt when it has no turn.
std::optional<turn_view> view_of(const child& c, const std::string& id);

// The turn ids a wait for `ids` covers among `all` (a parent's children): a child's id, its turns
// neither received nor cancelled, else its latest; `ID.N` as it is (std::invalid_argument when
// that child has no such turn); no ids, every turn of `all` neither received nor cancelled.
// `named` gives the child an id names, or throws std::invalid_argument.
std::vector<std::string> waited_turns(const std::vector<const child*>& all, const std::vector<std::string>& ids,
                                      const std::function<const child&(const std::string&)>& named);

// One line per child with a turn: `ID "TITLE": STATE[, turn N]`, the state from its latest turn
// (queued, waiting, running, completed: finished and not received, delivered, cancelled; error
// ones marked). At most 2 KiB: lines that do not fit are counted in a last line.
std::string list_text(const std::vector<const child*>& children);

}  // namespace handoff::cli::codex
