// `handoff hook cline`: the command handoff's cline plugin (plugin.hpp) runs when a `spawn_agent`
// call (a subagent) has finished, from its `afterTool` hook. It reads one JSON input on stdin and
// prints the text the parent model gets instead of spawn_agent's result, or nothing (the result
// stands as cline made it); it always exits 0.
//
// The input (the plugin's; every member optional but agentId, callId and text):
//   event          "completed" (default); "failed": the call ended in an error, and no sibling's
//                  wait should wait for it (cancelled in handoffd); nothing is printed
//   agentId        the parent agent (snapshot.agentId): handoffd's parent id
//   callId         the spawn_agent call's id (toolCall.toolCallId): handoffd's child id
//   title          the call's task, as its description
//   text           the child's whole answer (spawn_agent's result.output.text)
//   siblings       the parent's other spawn_agent calls still running: they share this result's
//                  budget (subagent/wait's batchWith)
//   tokens         the parent's context use: its latest assistant message's input, output and
//                  cache tokens
//   contextWindow  the parent model's window, tokens, when the plugin knows it
//
// cline 3.0.65 cuts every string of a tool result past 8,000 characters in its middle, so what
// this prints is held within that (the reader profile "cline", engine/text/reader_profile.hpp):
// the bounded section, the held-back note, or the hook's own head and tail. An answer that fits
// (the wait caps for that reader) with no sibling prints nothing and needs no daemon. Otherwise
// the answer is completed in handoffd (parent = agent, child = call) and taken back by one
// subagent/wait with reader "cline", the parent's usage and the siblings as batchWith (the hook
// core, cli/harness/core/bound_child.hpp). When handoffd is down, slow or refuses, the hook cuts
// the head and tail itself within the same caps with a private copy of the answer that
// read_files reaches, and one line naming it (cli/harness/core/local_bound.hpp).
//
// cline ends its whole run when a hook takes over 3,000 ms, so the plugin kills this command at
// cline_hook_kill_ms, and the command keeps within less: its handoffd budget and its siblings'
// wait are capped here (cline_settings).
#pragma once

#include <chrono>
#include <string>

#include "cli/harness/core/hook_settings.hpp"

namespace handoff::cli::cline {

inline constexpr std::chrono::milliseconds cline_connect_budget{1'000};   // connect (or start), started, completed
inline constexpr std::chrono::milliseconds cline_siblings_wait_most{1'200};  // a wait with siblings, at most

// The hook core's settings with the budgets above: HANDOFF_HOOK_SIBLINGS_WAIT_MS may lower the
// siblings' wait, never raise it past cline's limit.
hook_core::hook_settings cline_settings(hook_core::hook_settings settings);

// Runs one hook invocation on `input` (the bytes of stdin); returns what to print (empty: the
// result stands).
std::string run_hook(const std::string& input, const hook_core::hook_settings& settings);

}  // namespace handoff::cli::cline
