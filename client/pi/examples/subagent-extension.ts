// A minimal subagent extension wired to handoff (the README's example; type-checked with the
// package). Children are `pi -p` processes; their final answers go to handoffd, which hands the
// parent bounded head+tail batches: by itself when the session goes idle, or through subagent_wait.
//
// In your own extension, import from "@handoff/pi" instead of "../src/index.js".
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { Type } from "typebox";

import { createHandoffAdapter, HandoffError, type SubagentCompletion } from "../src/index.js";

export default function subagents(pi: ExtensionAPI): void {
  // Registers this session as the parent at handoffd on session_start; answers usage queries,
  // reports busy/idle, delivers batches with sendMessage(followUp, triggerTurn).
  const handoff = createHandoffAdapter(pi);
  let next = 1;

  pi.registerTool({
    name: "subagent_spawn",
    label: "Spawn subagent",
    description:
      "Run a task in a child Pi process. Its final answer comes back by itself when you are idle, or call subagent_wait.",
    parameters: Type.Object({ task: Type.String(), title: Type.Optional(Type.String()) }),
    async execute(_toolCallId, params, _signal, _onUpdate, ctx) {
      const childId = `sub-${next++}`;
      const title = params.title ?? params.task.slice(0, 60);
      await handoff.started(childId, title);
      void pi.exec("pi", ["-p", params.task], { cwd: ctx.cwd }).then(
        (run) =>
          report(
            run.code === 0
              ? { childId, title, status: "done", finalText: run.stdout }
              : { childId, title, status: "error", error: `exit ${run.code}: ${run.stderr.slice(-2000)}`, finalText: run.stdout },
          ),
        (error: unknown) => report({ childId, title, status: "error", error: String(error), finalText: "" }),
      ).catch((error: unknown) => ctx.ui.notify(`${childId}: result not handed off: ${String(error)}`, "error"));
      return { content: [{ type: "text", text: `Started ${childId} (${title}).` }], details: { childId } };
    },
  });

  pi.registerTool({
    name: "subagent_wait",
    label: "Wait for subagents",
    description: "Wait for the listed subagents and return their results (long ones as head + tail + where the rest is).",
    parameters: Type.Object({
      ids: Type.Array(Type.String(), { minItems: 1, maxItems: 64 }),
      timeoutMs: Type.Optional(Type.Number({ minimum: 0 })),
    }),
    async execute(_toolCallId, params, signal) {
      const result = await handoff.wait(params.ids, {
        ...(params.timeoutMs === undefined ? {} : { timeoutMs: params.timeoutMs }),
        ...(signal === undefined ? {} : { signal }),
      });
      const pending = result.pending.length > 0 ? `\n\nStill running: ${result.pending.join(", ")}.` : "";
      return { content: [{ type: "text", text: result.text + pending }], details: { deferred: result.deferred } };
    },
  });

  pi.registerTool({
    name: "subagent_check",
    label: "Check a subagent",
    description: "State of one subagent and a short preview of its latest output.",
    parameters: Type.Object({ id: Type.String() }),
    async execute(_toolCallId, params) {
      const state = await handoff.check(params.id);
      return { content: [{ type: "text", text: `${state.childId}: ${state.state}\n${state.preview}` }], details: state };
    },
  });

  // completed is durable once it resolves, and idempotent: retry while the daemon restarts.
  async function report(completion: SubagentCompletion): Promise<void> {
    for (let attempt = 1; ; attempt += 1) {
      try {
        await handoff.completed(completion);
        return;
      } catch (error) {
        if (!(error instanceof HandoffError) || !error.retryable || attempt >= 10) throw error;
        await new Promise((resolve) => setTimeout(resolve, 500 * attempt));
      }
    }
  }
}
