// A Pi extension that bounds npm pi-subagents' results with handoff, without patching it: load it
// beside pi-subagents (`@handoff/pi/pi-subagents`, one line of Pi settings).
//
// - Foreground: on `tool_result` of the tool `subagent`, the children (pi-subagents'
//   `details.results[]`) whose answers the result's text actually contains (verbatim, or
//   JSON-escaped in a workflow's return value) are reported to handoffd (`subagent/completed`
//   under this session's parentId, ids unique per session) and projected in one batch
//   (`subagent/wait`: 16 KiB per result, 48 KiB per batch, shrunk by the parent's live context
//   usage); each projection replaces its answer where it stood (answer-splice.ts). Everything else
//   pi-subagents wrote (a workflow's return value, console, call trace, output paths) is kept, and
//   the text never grows. pi-subagents' `details` are left as they are, so its renderer still works.
// - Background: on `message_end` of a custom `subagent-notify` message, the runs it reports are
//   completed in handoffd and the message's content becomes its header (the first line its
//   renderer parses) plus their batch projection. The `subagent/wait` that projects them also
//   consumes them, so handoffd never delivers them again when the parent goes idle.
//   `subagent:async-started` on pi.events reports the run as `started`.
// - A text of at most `passThroughBytes` passes byte for byte, without an artifact.
// - If handoffd is not connected (none could be reached or started), the answers are bounded here
//   instead, as subagent_wait does then (local-bound.ts): head and tail within the same caps, the
//   full text in a private copy, and the hook core's one line. If a call fails otherwise or takes
//   longer than `daemonTimeoutMs`, or no copy can be written, the original text passes unchanged
//   with one line saying it was not bounded (UNBOUNDED_NOTE): a result is never lost, and never
//   held longer than that.
// - One parent endpoint per session: the adapter is shared with the default handoff extension
//   when both are loaded (session-endpoint.ts).
import { randomBytes } from "node:crypto";

import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";

import { locateAnswers, spliceAnswers } from "./answer-splice.js";
import { createHandoffAdapter, type HandoffAdapter, type HandoffAdapterOptions } from "./pi-adapter.js";
import {
  asyncCompletion,
  asyncStart,
  backgroundChildId,
  foregroundChildren,
  hasNonText,
  splitNotify,
  textOf,
  type AsyncCompletion,
  type ChildAnswer,
} from "./pi-subagents-results.js";
import { HandoffError } from "./errors.js";
import { localBatch } from "./local-bound.js";
import type { WaitResult } from "./protocol.js";
import { sessionAdapter } from "./session-endpoint.js";

export interface PiSubagentsBridgeOptions extends HandoffAdapterOptions {
  /** Texts of at most this many UTF-8 bytes pass unchanged (default 16384, the wait surface's per-result cap). */
  passThroughBytes?: number;
  /** The longest the bridge waits for handoffd on one result before passing it unbounded, ms (default 5000). */
  daemonTimeoutMs?: number;
}

/** The line appended to a result handoff could not bound; `reason` is one line. */
export function unboundedNote(reason: string): string {
  return `[handoff: this result was not bounded (${reason.replace(/\s+/g, " ").trim()}); it is shown in full]`;
}

/** pi-subagents' names (0.67.0): its tool, its notice message type and its bus events. */
const SUBAGENT_TOOL = "subagent";
const NOTIFY_TYPE = "subagent-notify";
const ASYNC_STARTED = "subagent:async-started";
const ASYNC_COMPLETE = "subagent:async-complete";
/** pi-subagents' own lines of a notice kept beside the batch, UTF-8 bytes at most. */
const MAX_KEPT_NOTICE_BYTES = 1024;
/** Background completions remembered until their notice arrives (oldest dropped first). */
const MAX_REMEMBERED_COMPLETIONS = 256;

type BridgeApi = Pick<ExtensionAPI, "on" | "sendMessage" | "events">;

export class PiSubagentsBridge {
  readonly adapter: HandoffAdapter;
  private readonly passThroughBytes: number;
  private readonly daemonTimeoutMs: number;
  /** `subagent:async-complete` payloads by run id, waiting for their notice. */
  private readonly completions = new Map<string, AsyncCompletion>();

  constructor(pi: BridgeApi, options: PiSubagentsBridgeOptions = {}) {
    const { passThroughBytes, daemonTimeoutMs, ...adapterOptions } = options;
    this.passThroughBytes = passThroughBytes ?? 16 * 1024;
    this.daemonTimeoutMs = daemonTimeoutMs ?? 5_000;
    this.adapter = sessionAdapter(pi, () => createHandoffAdapter(pi, adapterOptions));

    pi.on("tool_result", async (event) => {
      if (event.toolName !== SUBAGENT_TOOL) return undefined;
      const text = await this.boundForeground(event.content, event.details);
      return text === undefined ? undefined : { content: [{ type: "text", text }] };
    });
    pi.on("message_end", async (event) => {
      const message = event.message;
      if (message.role !== "custom" || message.customType !== NOTIFY_TYPE) return undefined;
      const text = await this.boundBackground(message.content);
      if (text === undefined) return undefined;
      return { message: { ...message, content: typeof message.content === "string" ? text : [{ type: "text", text }] } };
    });
    pi.events.on(ASYNC_STARTED, (payload) => this.onAsyncStarted(payload));
    pi.events.on(ASYNC_COMPLETE, (payload) => this.onAsyncComplete(payload));
  }

  /** The replacement text of a `subagent` tool result, or undefined to leave it as it is. */
  async boundForeground(content: unknown, details: unknown): Promise<string | undefined> {
    if (hasNonText(content)) return undefined;
    const original = textOf(content);
    if (Buffer.byteLength(original, "utf8") <= this.passThroughBytes) return undefined;
    // Not the tool call id: some providers reuse those within a session.
    const located = locateAnswers(original, foregroundChildren(`fg-${randomBytes(6).toString("hex")}`, details));
    if (located.length === 0) return undefined;  // a management answer, or the text repeats no child's answer
    const children = located.map(({ child }) => child);
    let batch: WaitResult;
    try {
      batch = await this.consume(children);
    } catch (error) {
      const local = unreachable(error) ? this.boundLocally(children, error) : undefined;
      if (local === undefined) return `${original}\n\n${unboundedNote(error instanceof Error ? error.message : String(error))}`;
      batch = local;
    }
    const projections = new Map(batch.sections.map((section) => [section.childId, section.text]));
    // Children the batch deferred stay whole here; consumed, so they are not delivered again.
    const deferred = children.filter((child) => !projections.has(child.childId)).map((child) => child.childId);
    if (deferred.length > 0) await this.adapter.cancel(deferred, { timeoutMs: this.daemonTimeoutMs }).catch(() => undefined);
    const text = spliceAnswers(original, located, (child) => projections.get(child.childId));
    return Buffer.byteLength(text, "utf8") < Buffer.byteLength(original, "utf8") ? text : undefined;
  }

  /** The replacement content of a `subagent-notify` message, or undefined to leave it as it is. */
  async boundBackground(content: unknown): Promise<string | undefined> {
    if (hasNonText(content)) return undefined;
    const original = textOf(content);
    // A notice in a form this reading does not know is bounded whole, with no header kept.
    const parts = splitNotify(original) ?? { header: undefined, body: original };
    const matched = this.takeCompletions(parts.body);
    if (Buffer.byteLength(original, "utf8") <= this.passThroughBytes) {
      // Shown as it is; the runs handoff knows as started are settled there too.
      if (matched.length > 0) void this.consume(matched).catch(() => undefined);
      return undefined;
    }
    // What the body holds besides the matched runs' summaries: pi-subagents' own lines (session
    // file, run ids) are kept after the batch; anything longer is bounded as one more child.
    const rest = matched
      .reduce((body, child) => body.replace(child.finalText, ""), parts.body)
      .replace(/\n{3,}/g, "\n\n")
      .trim();
    const restIsChild = Buffer.byteLength(rest, "utf8") > MAX_KEPT_NOTICE_BYTES;
    const children = restIsChild ? [...matched, noticeChild(rest)] : matched;
    if (children.length === 0) return undefined;
    const kept = restIsChild || rest === "" ? "" : `\n\n${rest}`;
    return this.project(children, original, (batch) => `${parts.header === undefined ? "" : `${parts.header}\n\n`}${batch}${kept}`);
  }

  // ---- handoffd -----------------------------------------------------------------------------

  /** Completes the children and returns `render(their batch)`; on any failure the original plus a note. */
  private async project(children: ChildAnswer[], original: string, render: (batch: string) => string): Promise<string> {
    try {
      return render((await this.consume(children)).text);
    } catch (error) {
      const local = unreachable(error) ? this.boundLocally(children, error) : undefined;
      if (local !== undefined && local.deferred === 0) return render(local.text);
      return `${original}\n\n${unboundedNote(error instanceof Error ? error.message : String(error))}`;
    }
  }

  /**
   * No handoffd: the children bounded here (local-bound.ts), as a batch; undefined when one could
   * not be (no private copy), so that the caller passes the original whole.
   */
  private boundLocally(children: ChildAnswer[], error: unknown): WaitResult | undefined {
    const reason = error instanceof Error ? error.message : String(error);
    const local = localBatch(children.map((child) => ({ ...child })), { reason });
    if (local.kept.length > local.deferred) return undefined;
    return { sections: local.sections, text: local.text, deferred: local.deferred, budget: local.budget, timedOut: false, pending: [] };
  }

  /** `completed` for each child, then one `wait` that projects and consumes them all. */
  private async consume(children: ChildAnswer[]): Promise<WaitResult> {
    if (this.adapter.client?.connected !== true) throw new HandoffError("not-connected", "handoffd is not connected");
    const signal = AbortSignal.timeout(this.daemonTimeoutMs);
    const call = { timeoutMs: this.daemonTimeoutMs, signal };
    await Promise.all(children.map((child) => this.adapter.completed(child, call)));
    const batch = await this.adapter.wait(children.map((child) => child.childId), { timeoutMs: 0, signal });
    const missing = children.length - batch.sections.length - batch.deferred;
    if (missing > 0) throw new Error(`handoffd returned ${batch.sections.length} of ${children.length} results`);
    return batch;
  }

  // ---- pi-subagents' bus events -------------------------------------------------------------

  private onAsyncStarted(payload: unknown): void {
    const start = asyncStart(payload);
    if (start === undefined || this.adapter.client?.connected !== true) return;
    // Bookkeeping only (subagent/check shows the run); a failure changes nothing for the result.
    this.adapter.started(backgroundChildId(start.runId), start.agent, { timeoutMs: this.daemonTimeoutMs }).catch(() => undefined);
  }

  private onAsyncComplete(payload: unknown): void {
    const completion = asyncCompletion(payload);
    if (completion === undefined) return;
    this.completions.set(completion.runId, completion);
    if (this.completions.size > MAX_REMEMBERED_COMPLETIONS) {
      const oldest = this.completions.keys().next();
      if (oldest.done !== true) this.completions.delete(oldest.value);
    }
  }

  /** The remembered completions whose summaries the notice body carries, as children (forgotten here). */
  private takeCompletions(body: string): ChildAnswer[] {
    const children: ChildAnswer[] = [];
    for (const [runId, completion] of this.completions) {
      const summary = completion.summary.trim();
      if (summary === "" || !body.includes(summary)) continue;
      this.completions.delete(runId);
      children.push({
        childId: backgroundChildId(runId),
        title: completion.agent,
        status: completion.success ? "done" : "error",
        ...(completion.success ? {} : { error: "the background run failed" }),
        finalText: summary,
      });
    }
    return children;
  }
}

/** No handoffd to be had (nothing was sent to one): what is bounded here instead. */
function unreachable(error: unknown): boolean {
  return error instanceof HandoffError && error.kind === "not-connected";
}

/** The part of a notice no `subagent:async-complete` accounted for, as one child of its own. */
function noticeChild(text: string): ChildAnswer {
  return { childId: `notify/${Date.now()}-${Math.random().toString(36).slice(2, 8)}`, title: "background task", status: "done", finalText: text };
}

/** The bridge, for embedding or tests. */
export function createPiSubagentsBridge(pi: BridgeApi, options: PiSubagentsBridgeOptions = {}): PiSubagentsBridge {
  return new PiSubagentsBridge(pi, options);
}

/** The Pi extension `@handoff/pi/pi-subagents`: load it beside pi-subagents. */
export default function piSubagentsBridge(pi: ExtensionAPI): void {
  createPiSubagentsBridge(pi);
}
