#include "cli/harness/opencode/plugin.hpp"

#include "cli/harness/core/plugin_js.hpp"

namespace handoff::cli::opencode {
namespace {

// Filled by hook_core::fill_slots (cli/harness/core/plugin_js.hpp): @HANDOFF@ with the executable's
// path as a JavaScript string, @RUN_HOOK@ with the core's runHook(input, ms) for
// `handoff hook opencode`.
constexpr std::string_view plugin_template = R"JS(// handoff's opencode plugin, written by `handoff setup opencode` (`--remove` takes it out again).
// When a task call (a subagent) finishes, it runs `handoff hook opencode`, which bounds a long
// answer (its head, its tail, and `read` calls for the rest of the full text, kept in a 0600 file),
// one budget for the tasks of one step; the parent model gets that instead of the task's output.
// It never loses a result: on any failure the output stands, with one line saying so.
import { spawn } from "node:child_process";

const HANDOFF = @HANDOFF@;
const LONE_MS = 12000; // a result alone: handoffd has 3 s a call (connect, complete, wait)
const SIBLINGS_MS = 1510000; // a result waiting for its step's other tasks (the hook's 25 min, and slack)

@RUN_HOOK@
export const HandoffPlugin = async ({ client }) => {
  const running = new Map(); // session id -> the ids of its task calls running
  const latest = new Map(); // session id -> { tokens, providerID, modelID } of its latest assistant message
  const windows = new Map(); // "provider/model" -> limit.context

  async function windowOf(providerID, modelID) {
    const key = `${providerID}/${modelID}`;
    if (windows.has(key)) return windows.get(key);
    let context;
    try {
      const r = await Promise.race([client.config.providers(), new Promise((ok) => setTimeout(ok, 2000))]);
      const provider = (r?.data?.providers ?? []).find((p) => p?.id === providerID);
      const n = provider?.models?.[modelID]?.limit?.context;
      if (typeof n === "number" && n > 0) context = n;
    } catch {}
    windows.set(key, context);
    return context;
  }

  const notBounded = (output, why) => {
    try { output.output += `\n\n[handoff: this result was not bounded (${why})]`; } catch {}
  };

  return {
    "tool.execute.before": async (input) => {
      try {
        if (input?.tool !== "task") return;
        if (!running.has(input.sessionID)) running.set(input.sessionID, new Set());
        running.get(input.sessionID).add(input.callID);
      } catch {}
    },
    "tool.execute.after": async (input, output) => {
      if (input?.tool !== "task") return;
      try {
        if (typeof output?.output !== "string") return;
        const session = input.sessionID;
        const siblings = [...(running.get(session) ?? [])].filter((id) => id !== input.callID);
        const meta = output.metadata ?? {};
        const last = latest.get(session);
        const answer = await runHook({
          event: "completed",
          sessionID: session,
          callID: input.callID,
          title: String(input.args?.description ?? output.title ?? ""),
          output: output.output,
          outputPath: meta.truncated && typeof meta.outputPath === "string" ? meta.outputPath : undefined,
          siblings,
          tokens: last?.tokens,
          contextWindow: last ? await windowOf(last.providerID, last.modelID) : undefined,
        }, siblings.length > 0 ? SIBLINGS_MS : LONE_MS);
        if (answer.error !== undefined) notBounded(output, answer.error);
        else if (answer.out) output.output = answer.out;
      } catch (e) {
        notBounded(output, String(e?.message ?? e));
      } finally {
        try { running.get(input.sessionID)?.delete(input.callID); } catch {}
      }
    },
    event: async ({ event }) => {
      try {
        if (event?.type === "message.updated") {
          const info = event.properties?.info;
          if (info?.role !== "assistant") return;
          const t = info.tokens;
          const sum = t ? (t.input ?? 0) + (t.output ?? 0) + (t.reasoning ?? 0) + (t.cache?.read ?? 0) + (t.cache?.write ?? 0) : 0;
          const prior = latest.get(info.sessionID);
          latest.set(info.sessionID, { tokens: sum > 0 ? t : prior?.tokens, providerID: info.providerID, modelID: info.modelID });
        } else if (event?.type === "message.part.updated") {
          const part = event.properties?.part;
          if (part?.type !== "tool" || part.tool !== "task" || part.state?.status !== "error") return;
          if (!running.get(part.sessionID)?.delete(part.callID)) return;
          runHook({ event: "failed", sessionID: part.sessionID, callID: part.callID }, LONE_MS).catch(() => {});
        }
      } catch {}
    },
  };
};
)JS";

}  // namespace

std::string opencode_plugin_source(const std::string& executable) {
  return hook_core::fill_slots(plugin_template, {{"HANDOFF", hook_core::js_string(executable)},
                                                  {"RUN_HOOK", hook_core::run_hook_js("opencode")}});
}

}  // namespace handoff::cli::opencode
