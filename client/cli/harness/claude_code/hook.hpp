// `handoff hook claude-code`: the command Claude Code runs for handoff's hooks (installed by
// `handoff setup claude-code`). It reads one hook input (JSON) on stdin and prints at most one
// JSON answer on stdout, and always exits 0: whatever goes wrong, the tool call's own output
// stands, with one line saying it was not bounded.
//
//   PostToolUse, Agent, status "completed" (a foreground agent): the child's whole answer (the
//     text of every content block, joined with "\n") is completed in handoffd under the session
//     as parent (session_id) and child (tool_use_id), then taken back by one subagent/wait with
//     reader "claude-code", the parent's context use from its transcript, and the turn's other
//     Agent calls as batchWith, so parallel agents share one budget (the hook core,
//     cli/harness/core/bound_child.hpp). The answer replaces only `content` in Claude Code's own
//     response object (a plain string would be ignored). An answer that fits (fits_unchanged)
//     with no sibling passes as it is: no daemon call. When handoffd cannot be reached or started
//     (or does not bound it), the answer's head and tail still arrive, cut by the hook within
//     the same caps, with one line naming a private copy of the full text
//     (cli/harness/core/local_bound.hpp).
//   PostToolUse, Agent, status "async_launched" (a background agent), and PostToolUseFailure of
//     Agent: the child is cancelled in handoffd, so a sibling's wait does not wait for it.
//   PreToolUse, Agent, headless only (hook_settings::attended false): an Agent call asking for
//     the background, or not saying (Claude Code then runs it in the background), runs in the
//     foreground (updatedInput run_in_background: false), where its answer is bounded as above.
//   SubagentStop, PreToolUse of SubagentHandback, UserPromptSubmit: a background agent's report
//     (background.hpp).
#pragma once

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/harness/claude_code/transcript.hpp"
#include "cli/harness/core/bound_child.hpp"
#include "cli/harness/core/daemon_link.hpp"
#include "cli/harness/core/hook_settings.hpp"
#include "handoff/client.hpp"

namespace handoff::cli::claude_code {

// The hook core's (cli/harness/core/), under the names this folder has always used.
using hook_core::connect;
using hook_core::grouped;
using hook_core::max_hook_input_bytes;

// The core's settings (socket, budgets, context window: $HANDOFF_CONTEXT_WINDOW, else
// $CLAUDE_CODE_MAX_CONTEXT_TOKENS, which Claude Code itself honours; else unknown, and the static
// caps apply, as Claude Code tells a hook no window), and Claude Code's own.
struct hook_settings : hook_core::hook_settings {
  // How long to read the transcript again for the turn's assistant message, which Claude Code
  // may write after the tool's hook has started.
  std::chrono::milliseconds transcript_wait{3'000};
  // Where the two UserPromptSubmit hooks hand bounded reports over (spool.hpp):
  // spool_base() unless a test says otherwise.
  std::filesystem::path spool_base;
  // How long the deliverer waits for its gate's decision on a notice (the gate's own budget is
  // connect_budget per call; Claude Code kills it at hook_timeout_s).
  std::chrono::milliseconds decision_wait{15'000};
  // How long the gate waits to see its prompt's deliverer start before it lets the notice pass
  // (both are started by Claude Code at once).
  std::chrono::milliseconds deliverer_wait{3'000};
  // Someone is at the terminal: $CLAUDE_CODE_SESSION_ATTENDED, which Claude Code 2.1.328 and 2.1.332 set to
  // "1" in its interactive UI and "0" in `claude -p` (and the Agent SDK). Headless, a blocked
  // prompt ends the run with the prompt as its result and no asyncRewake hook is heard, so a
  // background agent is run in the foreground instead (its answer bounded as a tool result) and
  // no notice is ever blocked.
  bool attended = true;
};

// The parent's context use for a wait: the transcript's latest usage against the known window;
// nullopt when either is unknown (the static caps apply).
std::optional<rpc::usage_dto> usage_of(const transcript_turn& turn, const hook_settings& settings);

// What the model gets for a report a wait deferred (its batch had no room for it): where it is
// kept and the Bash command that gets it (hook_core::held_back_note for Claude Code's reader).
std::string held_back_note(const std::string& parent, const std::string& child, std::size_t bytes);

// The text of an Agent tool_response's content: every text block, joined with "\n".
std::string agent_answer_text(const nlohmann::json& content);

// True when `text` would pass a wait unchanged for Claude Code with the default caps (16 KiB,
// 600 lines, less Claude Code's frame and indent): such an answer alone needs no daemon.
bool fits_unchanged(const std::string& text);

// Runs one hook invocation on `input` (the bytes of stdin). Returns what to print on stdout
// (empty: nothing, the tool's output or the prompt stands as it is).
std::string run_claude_code_hook(const std::string& input, const hook_settings& settings);

// `handoff hook claude-code --deliver`, the asyncRewake UserPromptSubmit hook: hands what the
// gate spooled to `hand_over` and returns true (exit 2), else false (exit 0).
// background.hpp.
bool run_claude_code_deliverer(const std::string& input, const hook_settings& settings,
                               const std::function<void(const std::string&)>& hand_over);

}  // namespace handoff::cli::claude_code
