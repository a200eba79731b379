// handoff's entry in GitHub Copilot CLI's user settings (`${COPILOT_HOME:-~/.copilot}/settings.json`,
// whose `hooks` Copilot 1.0.102 reads beside the files in `hooks/`), merged into what is there and
// taken out again exactly.
//
// handoff's entries, and nothing else, are (COMMAND: the quoted handoff + " hook copilot"):
//   hooks.subagentStop  {"type": "command", "bash": COMMAND, "timeoutSec": 1800}: each child's
//                       answer bounded as it finishes (a wait for its siblings may last as long
//                       as they run; Copilot kills a hook at its timeoutSec and keeps the answer)
//   hooks.preToolUse    {"type": "command", "bash": COMMAND + " --store DIR"..., "timeoutSec": 10}:
//                       Copilot's `view` of a full text in one of those stores (or in the hook's
//                       own private copies) is allowed without asking, as the footer's pages need;
//                       every other call is left to Copilot's permissions
//   hooks.postToolUseFailure {"type": "command", "bash": COMMAND, "timeoutSec": 30}: a task whose
//                       child failed is cancelled in handoffd, so its siblings stop waiting for it
// A hook is handoff's when its `bash` is the quoted handoff + " hook copilot", alone or followed
// by " --store " (whatever the path of the handoff that wrote it), so installing again from
// another build replaces it where it stood. Everything else in the file is kept as it is, in its
// order. Installing twice is installing once.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace handoff::cli::copilot {

// Every event handoff puts a hook under: each must be an array in a file setup edits.
inline constexpr const char* copilot_events[] = {"subagentStop", "preToolUse", "postToolUseFailure"};

inline constexpr int copilot_stop_timeout_s = 1800;  // subagentStop: above the hook's 25-minute wait for siblings
inline constexpr int copilot_pre_timeout_s = 10;     // preToolUse: a path looked at, no daemon
inline constexpr int copilot_failure_timeout_s = 30;  // postToolUseFailure: one cancel within the hook's 3 s budget

// `settings` with handoff's entries put in (replacing any earlier ones of handoff's), for the
// hook command `command` (the quoted handoff + " hook copilot") and the stores `view` may read.
nlohmann::ordered_json with_copilot_hooks(nlohmann::ordered_json settings, const std::string& command,
                                          const std::vector<std::string>& stores);
// `settings` with every hook of handoff's taken out, and the containers they leave empty.
nlohmann::ordered_json without_copilot_hooks(nlohmann::ordered_json settings);

}  // namespace handoff::cli::copilot
