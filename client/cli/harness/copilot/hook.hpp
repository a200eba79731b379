// `handoff hook copilot`: the command GitHub Copilot CLI 1.0.102 runs for handoff's hooks
// (installed by `handoff setup copilot`), which tells them apart by their input. Above all
// subagentStop, run as each subagent finishes, before Copilot turns its
// answer into the task tool's result (or read_agent's, for a background agent) and cuts that
// past 20,480 bytes to a 500-character head, the verdict lost. It reads one hook input (JSON) on
// stdin, prints at most one JSON answer on stdout and always exits 0: whatever goes wrong, the
// child's answer stands as Copilot has it, with one line on stderr saying it was not bounded.
//
// preToolUse (its input {sessionId, timestamp, cwd, toolName, toolArgs}): a `view` whose path is
// a full text in one of the stores setup named (`--store DIR`) or among the hook's own private
// copies (an absolute, normal path; a regular file, not a symlink, named <sha256>.txt) is
// answered {"permissionDecision": "allow"}, so the footer's pages read in the terminal UI without
// a prompt for a path outside the project (measured: "Allow path access" otherwise); anything
// else gets no answer, and Copilot's own permissions decide.
//
// postToolUseFailure (its input {sessionId, timestamp, cwd, toolName, toolArgs, error}; measured:
// a task whose child failed runs no subagentStop): the task call, found in the session's
// transcript by its arguments, is cancelled in handoffd, so its siblings' waits do not wait for
// it. Nothing is printed.
//
// subagentStop's input: {sessionId, transcriptPath, agentId, parentAgentId, agentName, agentType,
// response (the child's whole answer), stopReason, stop_hook_active, cwd, timestamp}.
// The answer: {"modifiedResponse": TEXT}, which Copilot gives the model instead of `response`.
//
// The child is the task call that started it (transcript.hpp: its toolCallId, else the agentId),
// under the parent agent (parentAgentId, else sessionId) as parent; its siblings are the other
// foreground task calls of the same assistant message, which Copilot runs in parallel, each
// child's hook in its own process as it finishes, so they share one budget (batchWith). An
// answer that fits (the wait caps for reader "copilot") with no sibling passes as it is, byte
// for byte, with no daemon call; so does one the batch left whole. Otherwise the hook core
// (cli/harness/core/bound_child.hpp) completes it in handoffd and takes back its section with
// reader "copilot", the parent's usage (its latest model call's tokens against maxPromptTokens,
// or $HANDOFF_CONTEXT_WINDOW); the reader holds each section under Copilot's cut. When handoffd cannot be
// reached or started (or does not bound it), the hook cuts the head and tail itself within the
// same caps (cli/harness/core/local_bound.hpp), the full text in a private copy (Copilot's own
// saved file is 0644 and deleted when the session ends), with one line saying so.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "cli/harness/core/hook_settings.hpp"

namespace handoff::cli::copilot {

struct hook_answer {
  std::string out;   // stdout: the JSON answer, or empty (the child's answer stands)
  std::string note;  // stderr: one line when a result over the cap was not bounded
};

// Runs one hook invocation on `input` (the bytes of stdin); `stores`: the --store directories.
hook_answer run_hook(const std::string& input, const hook_core::hook_settings& settings,
                     const std::vector<std::string>& stores = {});

}  // namespace handoff::cli::copilot
