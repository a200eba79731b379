// `handoff hook opencode`: the command handoff's opencode plugin (plugin.hpp) runs when a `task`
// call (a subagent) has finished, from its `tool.execute.after` hook. It reads one JSON input on
// stdin and prints the text the parent model gets instead of the task's output, or nothing (the
// output stands as opencode made it); it always exits 0.
//
// The input (the plugin's; every member optional but sessionID and callID):
//   event          "completed" (default): the task's output.output is ready; "failed": the task
//                  ended in an error, and no sibling's wait should wait for it (cancelled)
//   sessionID      the parent session ("ses_..."): handoffd's parent id
//   callID         the task call's id: handoffd's child id
//   title          the task's description
//   output         opencode's output.output: `<task id="ses_..." state="completed">\n<task_result>\n`
//                  + the child's last text + `\n</task_result>\n</task>`, unless opencode cut it
//   outputPath     when opencode cut output (metadata.truncated): the file holding it whole; the
//                  full text is read from there, never from the cut copy
//   siblings       the session's other task calls still running (they finished in the same step):
//                  they share this result's budget (subagent/wait's batchWith)
//   tokens         the parent's latest assistant message's tokens {input, output, reasoning,
//                  cache: {read, write}}: its context use
//   contextWindow  the parent model's limit.context, tokens
//
// An answer that fits (the wait caps for reader "opencode") with no sibling passes as it is, byte
// for byte, with no daemon call. Otherwise the answer is completed in handoffd (parent = session,
// child = call) and taken back by one subagent/wait with reader "opencode", the parent's usage, and
// the siblings as batchWith (the hook core, cli/harness/core/bound_child.hpp); the bounded text is
// put back in opencode's own frame. When handoffd is down, slow or refuses, the hook cuts the head
// and tail itself within the same caps (cli/harness/core/local_bound.hpp), with one line naming
// the full text: opencode's own saved copy (outputPath) when it cut the output, the whole output
// projected so that the footer's line numbers are that file's; else a private copy of the answer,
// inside opencode's frame. The verdict is never lost to opencode's head-only cut.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "cli/harness/core/hook_settings.hpp"

namespace handoff::cli::opencode {

// The settings are the hook core's (cli/harness/core/hook_settings.hpp); the window there is
// used when the plugin names none. stdin or outputPath beyond hook_core::max_hook_input_bytes:
// not bounded.

// opencode's frame around a task's answer, and the answer: nullopt when `output` is not one.
struct task_frame {
  std::string open;    // `<task id="..." state="...">\n<task_result>\n`
  std::string answer;  // the child's text
  std::string close;   // `\n</task_result>\n</task>`
};
std::optional<task_frame> split_task_output(const std::string& output);

// Runs one hook invocation on `input` (the bytes of stdin); returns what to print (empty: the
// output stands).
std::string run_hook(const std::string& input, const hook_core::hook_settings& settings);

}  // namespace handoff::cli::opencode
