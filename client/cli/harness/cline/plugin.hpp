// handoff's cline plugin: the JavaScript module `handoff setup cline` writes in cline's plugins
// folder (`${CLINE_DIR:-~/.cline}/plugins/`), which cline 3.0.65 imports into a sandbox process of
// its hub daemon for every session. It stays small and leaves the work to `handoff hook cline`
// (hook.hpp), which its runHook (the hook core's, cli/harness/core/plugin_js.hpp) runs:
//   beforeTool   a `spawn_agent` call starts: it is one of its parent agent's running calls
//   afterTool    a `spawn_agent` call finished: runs the hook with the parent agent and call ids,
//                the child's answer (result.output.text), the parent's other running calls
//                (siblings) and its latest assistant message's tokens; returns
//                {result: {output: TEXT}} with what the hook prints, which is exactly what the
//                parent model reads (nothing printed: cline's own result stands, unless its JSON
//                text is over cline's cut while the answer is not: then the answer, whole). A
//                call that ended in an error: the hook cancels it, so its siblings stop waiting
//                for it.
// It never throws and answers within cline's hook limit (3,000 ms, after which cline ends the
// whole run with an error): the hook is killed at cline_hook_kill_ms, and the result stands.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

namespace handoff::cli::cline {

// The first line of every plugin handoff writes: how setup knows the file is its own.
inline constexpr std::string_view cline_plugin_marker = "// handoff's cline plugin";

inline constexpr std::chrono::milliseconds cline_hook_kill_ms{2'500};

// The plugin's source, running `handoff` at `executable` (absolute).
std::string cline_plugin_source(const std::string& executable);

}  // namespace handoff::cli::cline
