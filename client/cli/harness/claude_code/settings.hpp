// handoff's entries in a Claude Code settings file (`~/.claude/settings.json`, or a project's
// `.claude/settings.json`), merged into what is there and taken out again exactly.
//
// handoff's entries, and nothing else, are (COMMAND: the quoted handoff + " hook claude-code"):
//   hooks.PostToolUse         {"matcher": "Agent", "hooks": [{"type": "command", "command":
//   hooks.PostToolUseFailure   COMMAND, "timeout": 1800}]}: a foreground agent's answer
//   hooks.PreToolUse          {"matcher": "Agent|SubagentHandback", "hooks": [COMMAND, timeout
//                             30]}: an auto-mode agent's report, read (never rewritten); in
//                             `claude -p`, a background Agent call run in the foreground
//   hooks.SubagentStop        {"hooks": [COMMAND, timeout 30]}: a background agent's report
//   hooks.UserPromptSubmit    {"hooks": [COMMAND, timeout 30; COMMAND + " --deliver" with
//                             "asyncRewake": true, rewakeMessage, rewakeSummary, timeout 60]}:
//                             the notice blocked once its bounded copy is ready, and that copy
//                             handed to the model (background.hpp)
//   permissions.allow         "Read(/<artifact-dir>/**)": Claude Code's Read may read the artifact
//                             store without a prompt (that directory only, read only); one rule
//                             a store (store_dirs.hpp: the former default too, while it exists)
// A hook is handoff's when its command ends in " hook claude-code" or " hook claude-code
// --deliver" (whatever the path of the handoff that wrote it), so installing again from another
// build replaces it, where it stood (an older install's --foreground-agents group on Agent
// included). The allow rule is
// handoff's when it is the rule of a store of store_dirs::own (the one named by --artifact-dir,
// the default, the former default) or names a store of the former default's name,
// `Read(/.../subagent-results/**)`. Everything else in the file is kept as it
// is, in its order. Installing twice is installing once.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace handoff::cli::claude_code {

// Every event handoff puts a hook under: each must be an array in a file setup edits.
inline constexpr const char* handoff_events[] = {"PostToolUse", "PostToolUseFailure", "PreToolUse", "SubagentStop",
                                                 "UserPromptSubmit"};

struct claude_code_entries {
  std::string command;        // the hook command: the quoted handoff executable + " hook claude-code"
  std::vector<std::string> artifact_dirs;      // absolute: a Read allow rule each, in this order
  std::vector<std::string> own_artifact_dirs;  // absolute: the stores whose rules are handoff's
};

inline constexpr int hook_timeout_s = 1800;   // the Agent hooks' timeout, seconds (a wait for siblings)
inline constexpr int capture_timeout_s = 30;  // SubagentStop, SubagentHandback and the gate, seconds
inline constexpr int deliver_timeout_s = 60;  // the deliverer (it waits up to 15 s for the gate), seconds
// What the model reads before a bounded copy, and the user sees on the screen when it arrives.
inline constexpr std::string_view rewake_message =
    "A background agent's report, bounded by handoff (its first and last lines; the footer says how to read the "
    "rest):";
inline constexpr std::string_view rewake_summary = "handoff: bounded subagent report delivered";

// `settings` with handoff's entries put in (replacing any earlier ones of handoff's).
nlohmann::ordered_json with_handoff(nlohmann::ordered_json settings, const claude_code_entries& entries);
// `settings` with every entry of handoff's taken out (the Read rules of `artifact_dirs`, and any
// of a store of the former default's name), and the containers they leave empty.
nlohmann::ordered_json without_handoff(nlohmann::ordered_json settings, const std::vector<std::string>& artifact_dirs);
// The Read allow rule of `artifact_dir` (absolute, no trailing '/').
std::string read_rule(const std::string& artifact_dir);

}  // namespace handoff::cli::claude_code
