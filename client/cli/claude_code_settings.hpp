// handoff's entries in a Claude Code settings file (`~/.claude/settings.json`, or a project's
// `.claude/settings.json`), merged into what is there and taken out again exactly.
//
// handoff's entries, and nothing else, are:
//   hooks.PostToolUse        {"matcher": "Agent", "hooks": [{"type": "command", "command":
//   hooks.PostToolUseFailure  "'<handoff>' hook claude-code", "timeout": 1800}]}
//   hooks.PreToolUse         the same, only with --foreground-agents
//   permissions.allow        "Read(/<artifact-dir>/**)": Claude Code's Read may read the artifact
//                            store without a prompt (that directory only, read only)
// An entry is handoff's when its command ends in " hook claude-code" (whatever the path of the
// handoff that wrote it), so installing again from another build replaces it; the allow rule is
// handoff's when it is the rule of the store named (--artifact-dir, else the default) or names
// a default-named store, `Read(/.../subagent-results/**)`. Everything else in the file is kept as
// it is, in its order. Installing twice is installing once.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace handoff::cli {

struct claude_code_entries {
  std::string command;        // the hook command: the quoted handoff executable + " hook claude-code"
  std::string artifact_dir;   // absolute; its Read allow rule
  bool foreground_agents = false;
};

inline constexpr int hook_timeout_s = 1800;  // Claude Code's timeout for handoff's hook, seconds

// `settings` with handoff's entries put in (replacing any earlier ones of handoff's).
nlohmann::ordered_json with_handoff(nlohmann::ordered_json settings, const claude_code_entries& entries);
// `settings` with every entry of handoff's taken out (the Read rule of `artifact_dir`, and any
// of an artifact store's), and the containers they leave empty.
nlohmann::ordered_json without_handoff(nlohmann::ordered_json settings, const std::string& artifact_dir);
// The Read allow rule of `artifact_dir` (absolute, no trailing '/').
std::string read_rule(const std::string& artifact_dir);

}  // namespace handoff::cli
