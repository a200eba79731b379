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
// the siblings as batchWith; the bounded text is put back in opencode's own frame. When handoffd
// is down, slow or refuses, the output passes as opencode made it, with one line saying so.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

namespace handoff::cli {

inline constexpr std::size_t max_opencode_input_bytes = 80 << 20;  // stdin or outputPath beyond this: not bounded

struct opencode_hook_settings {
  std::string socket;                               // --socket, else the default
  std::chrono::milliseconds connect_budget{3'000};  // connect + complete (and a lone wait), at most
  // How long a result waits for its siblings (opencode shows the parent none of a step's results
  // before all of its tools are done); then it is shared with those that have finished.
  std::chrono::milliseconds siblings_wait{25 * 60'000};
  // The parent model's context window when the plugin knows none: $HANDOFF_CONTEXT_WINDOW; else
  // unknown, and the static caps apply.
  std::optional<std::int64_t> context_window;
};

// opencode's frame around a task's answer, and the answer: nullopt when `output` is not one.
struct task_frame {
  std::string open;    // `<task id="..." state="...">\n<task_result>\n`
  std::string answer;  // the child's text
  std::string close;   // `\n</task_result>\n</task>`
};
std::optional<task_frame> split_task_output(const std::string& output);

// Runs one hook invocation on `input` (the bytes of stdin); returns what to print (empty: the
// output stands).
std::string run_opencode_hook(const std::string& input, const opencode_hook_settings& settings);

}  // namespace handoff::cli
