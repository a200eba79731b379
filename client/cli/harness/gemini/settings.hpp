// handoff's entries in a Gemini CLI settings file (`~/.gemini/settings.json`, or a project's
// `.gemini/settings.json`), merged into what is there and taken out again exactly.
//
// handoff's entries, and nothing else, are (COMMAND: the quoted handoff + " hook gemini"):
//   hooks.BeforeTool  {"matcher": "invoke_agent", "hooks": [{"type": "command", "name":
//                     "handoff", "command": COMMAND, "timeout": 10000}]}: a subagent call of
//                     the turn is noted, so the children that run together share one budget
//   hooks.AfterTool   {"matcher": "invoke_agent", "hooks": [{"type": "command", "name":
//                     "handoff", "command": COMMAND, "timeout": 1800000}]}: the child's answer
//                     bounded (a wait for its siblings may last as long as they run)
// The name is what Gemini's terminal UI shows while the hook runs ("Executing Hook: handoff"), in
// place of the whole command.
// A hook is handoff's when its command ends in " hook gemini" (whatever the path of the handoff
// that wrote it), so installing again from another build replaces it where it stood. Everything
// else in the file is kept as it is, in its order. Installing twice is installing once.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace handoff::cli::gemini {

// Every event handoff puts a hook under: each must be an array in a file setup edits.
inline constexpr const char* gemini_events[] = {"BeforeTool", "AfterTool"};

inline constexpr const char* gemini_hook_name = "handoff";  // Gemini's status line while it runs

inline constexpr int gemini_before_timeout_ms = 10'000;     // BeforeTool: a file written, no daemon
inline constexpr int gemini_after_timeout_ms = 1'800'000;   // AfterTool: waits for the siblings

// `settings` with handoff's entries put in (replacing any earlier ones of handoff's), for the
// hook command `command`.
nlohmann::ordered_json with_gemini_hooks(nlohmann::ordered_json settings, const std::string& command);
// `settings` with every hook of handoff's taken out, and the containers they leave empty.
nlohmann::ordered_json without_gemini_hooks(nlohmann::ordered_json settings);

}  // namespace handoff::cli::gemini
