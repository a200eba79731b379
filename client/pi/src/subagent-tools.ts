// The subagent tools the model calls (OpenPI's surface): subagent_spawn, subagent_send,
// subagent_wait, subagent_check, subagent_cancel, subagent_list. Each is a thin shell over
// `Subagents`; texts tell the model what happened and what comes next. A refused call throws,
// which Pi shows the model as an error.
import type { AgentToolResult, ExtensionAPI, ExtensionContext, ToolDefinition } from "@earendil-works/pi-coding-agent";
import { Type, type TSchema } from "typebox";

import { HandoffError } from "./errors.js";
import type { Budget, CancelResult, CheckResult, WaitResult } from "./protocol.js";
import { formatBytes, renderBatch, type BatchSummary, type SectionSummary } from "./render.js";
import type { Sent, SpawnContext, Spawned, Subagents } from "./subagents.js";

/** `details` of a subagent_wait result (the batch without its texts). */
export interface WaitDetails extends BatchSummary {
  timedOut: boolean;
  pending: string[];
  budget: Budget | null;
}

function textResult<T>(text: string, details: T): AgentToolResult<T> {
  return { content: [{ type: "text", text }], details };
}

function spawnContext(ctx: ExtensionContext): SpawnContext {
  return { cwd: ctx.cwd, model: ctx.model, hasUI: ctx.hasUI, ui: ctx.ui, models: () => ctx.modelRegistry.getAll() };
}

const idParameter = Type.Object({ id: Type.String({ description: "The subagent id" }) });

/** What every tool description says about cut answers: read the file, do not ask again. */
const READ_NOT_ASK =
  "A long answer is cut to its first and last lines; its footer names the file with the full text and the read calls that show the rest: " +
  "read that file instead of asking the subagent again.";

/** Registers the six tools, each a thin shell over `subagents` (one function per tool below). */
export function registerSubagentTools(pi: Pick<ExtensionAPI, "registerTool">, subagents: Subagents): void {
  pi.registerTool(spawnTool(subagents));
  pi.registerTool(waitTool(subagents));
  pi.registerTool(checkTool(subagents));
  pi.registerTool(cancelTool(subagents));
  pi.registerTool(sendTool(subagents));
  pi.registerTool(listTool(subagents));
}

/** A tool definition with its parameter and details types inferred, as `registerTool` takes it. */
function tool<TParams extends TSchema, TDetails>(definition: ToolDefinition<TParams, TDetails>): ToolDefinition<TParams, TDetails> {
  return definition;
}

function spawnTool(subagents: Subagents) {
  return tool({
    name: "subagent_spawn",
    label: "Spawn subagent",
    description:
      "Start a subagent: a separate Pi process that works on `task` on its own and returns at once with its id. " +
      "Its final answer reaches you later: delivered automatically when you are idle, or returned by subagent_wait. " +
      `${READ_NOT_ASK} To give the same subagent more work later, with everything it already read, use subagent_send.`,
    promptSnippet: "subagent_spawn: run a task in a separate Pi subagent (results come back later)",
    parameters: Type.Object({
      task: Type.String({ description: "The subagent's prompt: everything it needs to know" }),
      title: Type.Optional(Type.String({ description: "A short title shown with its result (default: the task's first line)" })),
      cwd: Type.Optional(Type.String({ description: "Working directory (default: this session's)" })),
      model: Type.Optional(Type.String({ description: "Model id or provider/id (default: this session's model)" })),
    }),
    async execute(_toolCallId, params, _signal, _onUpdate, ctx) {
      const spawned = await subagents.spawn(params, spawnContext(ctx));
      return textResult(spawnedText(spawned), { childId: spawned.childId, title: spawned.title, queuePosition: spawned.queuePosition });
    },
  });
}

/** Started or queued, and what comes next. */
function spawnedText(spawned: Spawned): string {
  const name = `${spawned.childId} ${JSON.stringify(spawned.title)}`;
  const unreachable = spawned.daemonReachable
    ? ""
    : " handoffd is not reachable right now: the subagent runs anyway and its result is kept until it is back (subagent_check and subagent_wait fail until then).";
  return (
    (spawned.queuePosition === 0
      ? `Started subagent ${name}. Its result is delivered to you when you are idle; call subagent_wait to wait for it now.`
      : `Queued subagent ${name}: the limit of running subagents is reached; it starts when one finishes ` +
        `(position ${spawned.queuePosition} in the queue). Its result is delivered like any other.`) +
    unreachable +
    (spawned.modelNote !== undefined ? ` ${spawned.modelNote}` : "")
  );
}

function waitTool(subagents: Subagents) {
  return tool({
    name: "subagent_wait",
    label: "Wait for subagents",
    description:
      "Wait until subagents finish and return their results (each cut to fit if long). " +
      "Without `ids`, waits for every subagent of this session whose result you have not received yet; " +
      "a subagent's id waits for all its turns not received yet (`ID.N` for turn N only). " +
      READ_NOT_ASK,
    parameters: Type.Object({
      ids: Type.Optional(Type.Array(Type.String(), { description: "Subagent ids, or ID.N for turn N (default: all not yet received)" })),
      timeoutMs: Type.Optional(Type.Integer({ minimum: 0, maximum: 86_400_000, description: "Give up after this many ms (default: no limit)" })),
    }),
    async execute(_toolCallId, params, signal, _onUpdate, ctx) {
      subagents.setContext(spawnContext(ctx));
      let waited;
      try {
        waited = await subagents.wait(params.ids, params.timeoutMs, signal);
      } catch (error) {
        if (error instanceof HandoffError && error.kind === "aborted")
          throw new Error("subagent_wait was interrupted. Nothing is lost: results not returned here are delivered when you are idle.");
        throw error;
      }
      const empty: WaitDetails = { sections: [], deferred: 0, timedOut: false, pending: [], budget: null };
      if (waited === undefined) return textResult("No subagent of this session has a result you have not received.", empty);
      return textResult(waitedText(waited.result, waited.left), waitDetails(waited.result));
    },
    renderResult(result, options, theme) {
      const details = result.details as WaitDetails | undefined;
      const text = result.content.map((part) => (part.type === "text" ? part.text : "")).join("\n");
      return renderBatch("subagent_wait", details ?? { sections: [], deferred: 0 }, text, options.expanded, theme);
    },
  });
}

/** The sections, then a note for each kind of id not returned: still running, delivered, cancelled, over the limit. */
function waitedText(result: WaitResult, left: string[]): string {
  const notes: string[] = [];
  if (result.pending.length > 0)
    notes.push(`Still running: ${result.pending.join(", ")}. Call subagent_wait again, or their results are delivered when you are idle.`);
  if ((result.alreadyDelivered ?? []).length > 0) notes.push(`Already delivered earlier: ${(result.alreadyDelivered ?? []).join(", ")}.`);
  if ((result.cancelled ?? []).length > 0) notes.push(`Cancelled: ${(result.cancelled ?? []).join(", ")}.`);
  if (left.length > 0) notes.push(`Not waited for (at most 64 per call): ${left.join(", ")}.`);
  const text = [result.text, ...notes].filter((part) => part !== "").join("\n\n");
  return text === "" ? "No results." : text;
}

function waitDetails(result: WaitResult): WaitDetails {
  return {
    sections: result.sections.map(({ text: _text, ...rest }): SectionSummary => rest),
    deferred: result.deferred,
    timedOut: result.timedOut,
    pending: result.pending,
    budget: result.budget,
  };
}

function checkTool(subagents: Subagents) {
  return tool({
    name: "subagent_check",
    label: "Check subagent",
    description:
      "A subagent's state and a preview of its latest activity (at most 2 KiB / 20 lines); for a subagent given follow-ups, its latest turn (`ID.N`: turn N). " +
      "Does not consume its result.",
    parameters: idParameter,
    async execute(_toolCallId, params, signal) {
      const { check, turn, waiting } = await subagents.check(params.id, signal);
      return textResult(checkedText(check, turn, waiting), check);
    },
  });
}

/** `Subagent ID "TITLE": state (status), size`, then its error and latest activity. */
function checkedText(check: CheckResult, turn: number | undefined, waiting: boolean): string {
  let state: string = waiting ? "queued" : check.state;
  if (turn !== undefined && turn > 1) state = `turn ${turn}: ${state}`;
  if (check.status !== null) state += ` (${check.status})`;
  if (check.bytes !== null && check.lines !== null) state += `, ${formatBytes(check.bytes)} / ${check.lines} lines`;
  const lines = [`Subagent ${check.childId} ${JSON.stringify(check.title)}: ${state}`];
  if (check.error !== undefined && check.error !== "") lines.push(`Error: ${check.error}`);
  if (check.preview !== "") lines.push(`Latest activity${check.previewTruncated ? " (tail)" : ""}:`, check.preview);
  return lines.join("\n");
}

function cancelTool(subagents: Subagents) {
  return tool({
    name: "subagent_cancel",
    label: "Cancel subagent",
    description:
      "Stop a subagent: ends its process and everything it started, drops its results not received yet, and closes its conversation (subagent_send to it is refused after).",
    parameters: idParameter,
    async execute(_toolCallId, params, signal) {
      const { result, was, childId } = await subagents.cancel(params.id, signal);
      if (result === undefined && was === "cancelled") return textResult(`Subagent ${childId}: already cancelled.`, { childId, was, consumed: 0 });
      if (result === undefined)
        return textResult(`Subagent ${childId}: already delivered; nothing to cancel. Its conversation is closed: subagent_send to it is refused from now.`, {
          childId,
          was,
          consumed: 0,
        });
      if (result.cancelled.length === 0 || (was === "unknown" && !result.cancelled.includes(params.id)))
        throw new Error(`subagent_cancel: no subagent ${params.id} in this session`);
      return textResult(`Cancelled subagent ${childId}: ${cancelledWhat(was, result)}.`, { childId, was, consumed: result.consumed });
    },
  });
}

/** What cancelling did, by the state the child was in. */
function cancelledWhat(was: Awaited<ReturnType<Subagents["cancel"]>>["was"], result: CancelResult): string {
  if (was === "running") return "its process tree was ended";
  if (was === "queued" || was === "waiting") return "it had not started yet";
  return result.consumed > 0 ? "it had finished; its result was dropped" : "it had already ended";
}

function sendTool(subagents: Subagents) {
  return tool({
    name: "subagent_send",
    label: "Send to subagent",
    description:
      "Give a subagent more work: `message` becomes the next prompt of its own conversation, which goes on with everything it read and said so far " +
      "(same model, directory and limits), so it need not start over. Its answer is a new result `ID.N` (turn N), delivered when you are idle " +
      "or returned by subagent_wait, like any other. A subagent still working gets the message when its current turn ends. " +
      "Only for new work: to see more of an answer that was cut, read the full-text file its footer names instead of asking again.",
    promptSnippet: "subagent_send: continue a subagent's own conversation with new work",
    parameters: Type.Object({
      id: Type.String({ description: "The subagent id (as subagent_spawn returned it)" }),
      message: Type.String({ description: "The next prompt for that subagent" }),
    }),
    async execute(_toolCallId, params, _signal, _onUpdate, ctx) {
      const sent = await subagents.send(params.id, params.message, spawnContext(ctx));
      return textResult(sentText(sent), sent);
    },
  });
}

/** Started, queued behind its own turn or behind the limit, and where the answer comes. */
function sentText(sent: Sent): string {
  const name = `${sent.childId} ${JSON.stringify(sent.title)}`;
  const answer = `Its answer comes as ${sent.turnId} ${JSON.stringify(sent.turnTitle)}, delivered to you when you are idle; call subagent_wait to wait for it now.`;
  return (
    (sent.behind
      ? `Queued for subagent ${name}: it is still working on turn ${sent.turn - 1}; your message starts turn ${sent.turn} when that ends. `
      : sent.queuePosition > 0
        ? `Queued turn ${sent.turn} of subagent ${name}: the limit of running subagents is reached (position ${sent.queuePosition} in the queue). `
        : `Sent to subagent ${name}: turn ${sent.turn} started. `) +
    answer +
    (sent.daemonReachable ? "" : " handoffd is not reachable right now: the turn runs anyway and its result is kept until it is back.")
  );
}

function listTool(subagents: Subagents) {
  return tool({
    name: "subagent_list",
    label: "List subagents",
    description:
      "Every subagent of this session, one line each: id, title, state (queued, running, completed: finished but not received yet, delivered, cancelled), " +
      "its current turn, the size of that turn's answer and, when that was cut, the file with its full text (read it rather than asking again). At most 2 KiB.",
    promptSnippet: "subagent_list: see every subagent of this session at once",
    parameters: Type.Object({}),
    async execute(_toolCallId, _params, _signal, _onUpdate, ctx) {
      subagents.setContext(spawnContext(ctx));
      return textResult(subagents.list(), {});
    },
  });
}
