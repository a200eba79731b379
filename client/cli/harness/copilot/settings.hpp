// handoff's entry in GitHub Copilot CLI's user settings (`${COPILOT_HOME:-~/.copilot}/settings.json`,
// whose `hooks` Copilot 1.0.102 reads beside the files in `hooks/`), merged into what is there and
// taken out again exactly.
//
// handoff's entry, and nothing else, is (COMMAND: the quoted handoff + " hook copilot"):
//   hooks.subagentStop  {"type": "command", "bash": COMMAND, "timeoutSec": 1800}: each child's
//                       answer bounded as it finishes (a wait for its siblings may last as long
//                       as they run; Copilot kills a hook at its timeoutSec and keeps the answer)
// A hook is handoff's when its `bash` ends in " hook copilot" (whatever the path of the handoff
// that wrote it), so installing again from another build replaces it where it stood. Everything
// else in the file is kept as it is, in its order. Installing twice is installing once.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace handoff::cli::copilot {

inline constexpr const char* copilot_event = "subagentStop";
inline constexpr int copilot_hook_timeout_s = 1800;  // above the hook's 25-minute wait for siblings

// `settings` with handoff's entry put in (replacing any earlier one of handoff's), for the hook
// command `command`.
nlohmann::ordered_json with_copilot_hook(nlohmann::ordered_json settings, const std::string& command);
// `settings` with every hook of handoff's taken out, and the containers they leave empty.
nlohmann::ordered_json without_copilot_hook(nlohmann::ordered_json settings);

}  // namespace handoff::cli::copilot
