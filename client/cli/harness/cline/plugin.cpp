#include "cli/harness/cline/plugin.hpp"

#include <nlohmann/json.hpp>

namespace handoff::cli::cline {
namespace {

// @HANDOFF@ is replaced by the executable's path as a JSON (and so JavaScript) string, @KILL_MS@
// by cline_hook_kill_ms.
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

function runHook(input) {
  return new Promise((resolve) => {
    const out = [];
    let done = false;
    let timer;
    const finish = (r) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      resolve(r);
    };
    let child;
    try {
      child = spawn(HANDOFF, ["hook", "cline"], { stdio: ["pipe", "pipe", "ignore"] });
    } catch (e) {
      return resolve({ error: String(e?.message ?? e) });
    }
    timer = setTimeout(() => {
      try { child.kill("SIGKILL"); } catch {}
      finish({ error: `handoff hook cline gave no answer in ${KILL_MS} ms` });
    }, KILL_MS);
    child.stdout.on("data", (d) => out.push(d));
    child.on("error", (e) => finish({ error: String(e?.message ?? e) }));
    child.on("close", (code) =>
      finish(code === 0 ? { out: Buffer.concat(out).toString("utf8") } : { error: `handoff hook cline exited ${code}` }));
    child.stdin.on("error", () => {});
    child.stdin.end(JSON.stringify(input));
  });
}

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
          await runHook({ event: "failed", agentId: agent, callId: call });
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
        });
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

void replace_slot(std::string& text, std::string_view slot, const std::string& value) {
  text.replace(text.find(slot), slot.size(), value);
}

}  // namespace

std::string cline_plugin_source(const std::string& executable) {
  std::string out(plugin_template);
  replace_slot(out, "@HANDOFF@", nlohmann::json(executable).dump(-1, ' ', true, nlohmann::json::error_handler_t::replace));
  replace_slot(out, "@KILL_MS@", std::to_string(cline_hook_kill_ms.count()));
  return out;
}

}  // namespace handoff::cli::cline
