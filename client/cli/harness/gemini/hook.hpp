// `handoff hook gemini`: the command Gemini CLI 0.61.0 runs for handoff's BeforeTool and
// AfterTool hooks on invoke_agent (installed by `handoff setup gemini`). It reads one hook input
// (JSON) on stdin, prints at most one JSON answer on stdout and always exits 0: whatever goes
// wrong, the tool's own result stands, with one line on stderr saying it was not bounded.
//
//   BeforeTool: the call is marked as one of its turn's subagents (turn.hpp); nothing else.
//   AfterTool: the child's exact answer (tool_response.returnDisplay.result, else the text after
//     the "Subagent 'X' finished.\nTermination Reason: ...\nResult:\n" frame of llmContent; a
//     generalist's JSON `{"response": ...}` unescaped) is completed in handoffd under the session
//     as parent (session_id), then taken back by one subagent/wait with reader "gemini", the
//     parent's context use from its transcript, and the turn's other marked calls as batchWith,
//     so children that run together share one budget. The bounded text is written to a 0600
//     file in the project temp dir, with the full text beside it (Gemini's read_file reads only
//     there and in the workspace), and the answer is a tailToolCallRequest: Gemini's own
//     read_file returns that file as the invoke_agent call's normal result. An answer that
//     fits, alone, passes as it is with no daemon call; so does one the batch left whole.
//     The completing and waiting are the hook core's (cli/harness/core/bound_child.hpp). When
//     handoffd cannot be reached or started (or does not bound it), the hook cuts the head and
//     tail itself within the same caps (cli/harness/core/local_bound.hpp), the full copy in the
//     same project temp dir, and the answer is the same tailToolCallRequest.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/harness/core/hook_settings.hpp"

namespace handoff::cli::gemini {

// Every Gemini model's context window in Gemini CLI 0.61.0's source, tokens (it writes the window
// nowhere): the window when $HANDOFF_CONTEXT_WINDOW names none.
inline constexpr std::int64_t default_context_window = 1'048'576;

struct hook_answer {
  std::string out;   // stdout: the JSON answer, or empty (the tool's result stands)
  std::string note;  // stderr: one line when a result over the cap was not bounded
};

// The child's exact answer in an AfterTool tool_response of invoke_agent; nullopt when there is
// none (an error, another shape).
std::optional<std::string> child_answer(const nlohmann::json& tool_response);

// Runs one hook invocation on `input` (the bytes of stdin).
hook_answer run_hook(const std::string& input, const hook_core::hook_settings& settings);

}  // namespace handoff::cli::gemini
