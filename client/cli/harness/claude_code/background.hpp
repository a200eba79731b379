// Claude Code's background agents (every agent in its interactive UI; `run_in_background` ones
// in `claude -p`): their reports reach the parent model not as a tool result but as a notice
// (notice.hpp), which no hook can rewrite. handoff bounds them in three steps, each
// a hook `handoff setup claude-code` installs (docs/claude-code.md):
//
//   capture  SubagentStop (the agent's `last_assistant_message`) and PreToolUse of
//            SubagentHandback (auto mode: the report is that call's `message`, read, never
//            rewritten): a report that does not fit is completed in handoffd, the session as
//            parent, the agent as child (report_child); it fires before the notice exists.
//   gate     UserPromptSubmit, sync: a notice whose report handoffd holds is taken by one
//            subagent/wait (withReady: reports ready together share one budget, reader
//            claude-code), the bounded copy is put in the spool, and only then is the notice
//            blocked (the model never sees it). Whatever fails, the notice passes, with one
//            line saying it was not bounded.
//   deliver  UserPromptSubmit, asyncRewake: once its prompt's gate has decided, hands every
//            pending bounded copy to the model (stderr, exit 2: Claude Code wakes the model with
//            it) and marks it delivered. Any later prompt's deliverer takes what an earlier one
//            left (killed half-way).
#pragma once

#include <functional>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/harness/claude_code/hook.hpp"

namespace handoff::cli::claude_code {

inline constexpr int max_reports_per_agent = 64;  // a resumed agent's reports, in handoffd

// The handoffd child of an agent's n-th (1-based) different report: the agent's id, then
// "<id>.2", "<id>.3", ... (a resumed agent reports again under the same id).
std::string report_child(const std::string& agent_id, int n);

// capture: SubagentStop or PreToolUse of SubagentHandback. Prints nothing, ever.
void capture_report(const nlohmann::json& hook, const hook_settings& settings);

// gate: what to print for a UserPromptSubmit (a block decision, additionalContext, or nothing).
std::string gate_notice(const nlohmann::json& hook, const hook_settings& settings);

// deliver: hands the pending bounded copies to `hand_over` (which writes them to stderr) and
// returns true (the hook then exits 2 and Claude Code wakes the model with them), or returns
// false with nothing to hand over (exit 0).
bool deliver_reports(const nlohmann::json& hook, const hook_settings& settings,
                     const std::function<void(const std::string&)>& hand_over);

}  // namespace handoff::cli::claude_code
