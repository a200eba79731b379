#include "cli/harness/cline/plugin.hpp"

#include "cli/harness/core/plugin_js.hpp"

namespace handoff::cli::cline {
namespace {

// Filled by hook_core::fill_slots (cli/harness/core/plugin_js.hpp): @HANDOFF@ with the executable's
// path as a JavaScript string, @KILL_MS@ with cline_hook_kill_ms, @RUN_HOOK@ with the core's
// runHook(input, ms) for `handoff hook cline`, every call of which passes KILL_MS.
constexpr std::string_view plugin_template = R"JS(// handoff's cline plugin, written by `handoff setup cline` (`--remove` takes it out again).
// When a spawn_agent call (a subagent) finishes, it runs `handoff hook cline`, which bounds a long
// answer under cline's 8,000-character cut (its head, its tail, and read_files calls for the rest
// of the full text, kept in a 0600 file), one budget for the calls of one turn; the parent model
// gets that instead of spawn_agent's result. It never throws and answers within cline's 3-second
// hook limit: on any failure cline's own result stands.
import { spawn } from "node:child_process";

const HANDOFF = @HANDOFF@;
const KILL_MS = @KILL_MS@; // cline ends its whole run when a hook takes over 3,000 ms
// cline's cut on a tool result, characters: its result is the JSON text of {text, iterations, ...}.
const CUT = Number(process.env.CLINE_MESSAGE_BUILDER_MAX_TOOL_RESULT_CHARS) > 0
  ? Number(process.env.CLINE_MESSAGE_BUILDER_MAX_TOOL_RESULT_CHARS) : 8000;

@RUN_HOOK@
const running = new Map(); // parent agent id -> the ids of its spawn_agent calls running

// The parent's context use: its latest answered assistant message's tokens.
function contextTokens(snapshot) {
  const messages = Array.isArray(snapshot?.messages) ? snapshot.messages : [];
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]?.role === "assistant" ? messages[i].metrics : undefined;
    const n = m ? (m.inputTokens ?? 0) + (m.outputTokens ?? 0) + (m.cacheReadTokens ?? 0) + (m.cacheWriteTokens ?? 0) : 0;
    if (n > 0) return n;
  }
  return undefined;
}

const isSpawn = (p) => p?.toolCall?.toolName === "spawn_agent";

export default {
  name: "handoff",
  manifest: { capabilities: ["hooks"] },
  hooks: {
    beforeTool: async (p) => {
      try {
        if (!isSpawn(p)) return;
        const agent = p.snapshot?.agentId;
        if (!running.has(agent)) running.set(agent, new Set());
        running.get(agent).add(p.toolCall.toolCallId);
      } catch {}
    },
    afterTool: async (p) => {
      if (!isSpawn(p)) return;
      const agent = p.snapshot?.agentId;
      const call = p.toolCall?.toolCallId;
      try {
        const text = p.result?.output?.text;
        if (p.result?.isError || typeof text !== "string") {
          await runHook({ event: "failed", agentId: agent, callId: call }, KILL_MS);
          return;
        }
        const siblings = [...(running.get(agent) ?? [])].filter((id) => id !== call);
        const answer = await runHook({
          event: "completed",
          agentId: agent,
          callId: call,
          title: String(p.input?.task ?? "").slice(0, 200),
          text,
          siblings,
          tokens: contextTokens(p.snapshot),
        }, KILL_MS);
        if (answer.out) return { result: { output: answer.out } };
        // An answer that fits, alone: as cline made it, unless escaping it as JSON put it over
        // cline's cut; then the answer itself, whole.
        if (answer.out === "" && text.length <= CUT && JSON.stringify(p.result.output).length > CUT)
          return { result: { output: text } };
      } catch {
      } finally {
        try {
          running.get(agent)?.delete(call);
          if (running.get(agent)?.size === 0) running.delete(agent);
        } catch {}
      }
    },
  },
};
)JS";

}  // namespace

std::string cline_plugin_source(const std::string& executable) {
  return hook_core::fill_slots(plugin_template, {{"HANDOFF", hook_core::js_string(executable)},
                                                  {"KILL_MS", std::to_string(cline_hook_kill_ms.count())},
                                                  {"RUN_HOOK", hook_core::run_hook_js("cline")}});
}

}  // namespace handoff::cli::cline
