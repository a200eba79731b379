// handoff's opencode plugin: the JavaScript module `handoff setup opencode` writes (and lists in
// opencode.json's "plugin"). It stays small and leaves the work to `handoff hook opencode`
// (hook.hpp), which its runHook (the hook core's, cli/harness/core/plugin_js.hpp) runs:
//   tool.execute.before   a `task` call starts: it is one of its session's running tasks
//   tool.execute.after    a `task` call finished: runs the hook with the session and call ids, the
//                         output (and opencode's saved full copy when it cut it), the session's
//                         other running tasks (siblings), the parent's latest assistant message's
//                         tokens and its model's limit.context; sets output.output to what the
//                         hook prints (nothing printed: the output stands)
//   event                 message.updated: the parent's tokens and model; a `task` part in state
//                         "error": the hook cancels it, so its siblings stop waiting for it
// It never throws: on any failure (no hook, a non-zero exit, no answer within the time allowed)
// the output stands, with one line saying it was not bounded.
#pragma once

#include <string>
#include <string_view>

namespace handoff::cli::opencode {

// The first line of every plugin handoff writes: how setup knows the file is its own.
inline constexpr std::string_view opencode_plugin_marker = "// handoff's opencode plugin";

// The plugin's source, running `handoff` at `executable` (absolute).
std::string opencode_plugin_source(const std::string& executable);

}  // namespace handoff::cli::opencode
