// The subagents of one Pi session: child Pi processes it spawned, reported to handoffd.
//
// Contract:
// - `spawn` reports `subagent/started` first when connected (so check/wait know the child), then
//   runs the child at once, or queues it when `maxRunning` children run; queued children start in
//   spawn order. With handoffd unreachable it does not wait: the child runs all the same.
// - After every (re)connection to handoffd, `subagent/started` goes again for every running and
//   queued child (a restarted daemon has forgotten them; a known child is unchanged by it), and
//   completions being retried are sent at once.
// - Each child's latest activity goes to the daemon as `subagent/progress`; its end as
//   `subagent/completed` (status done/error, the exact final text), retried until the daemon takes
//   it, so a result is not lost to a daemon restart. A cancelled child is reported by `cancel`.
// - "Undelivered" children are the ones spawned here whose result has not reached the session yet
//   (not returned by a wait, not seen landing in an auto-delivery, not cancelled): `wait()` with no
//   ids waits for those.
// - The status line shows running, queued and pending (finished, not delivered) children.
// - `shutdown` kills every child's process group and tells handoffd they are cancelled (resolving
//   once it answered, or SHUTDOWN_CANCEL_MS passed); the guard kills them anyway if Pi dies.
// - Memory: a finished child's final text is dropped once handoffd took it; a child is forgotten
//   once its result reached the session (only its id stays, for subagent_cancel's answer).
import { randomBytes } from "node:crypto";
import { existsSync, statSync } from "node:fs";
import { isAbsolute, resolve } from "node:path";

import { HandoffError } from "./errors.js";
import type { HandoffAdapter, HandoffMessageDetails, SubagentCompletion } from "./pi-adapter.js";
import { chooseModel, type KnownModel } from "./model-choice.js";
import { PiChild, type ChildOutcome } from "./pi-child.js";
import { piLaunch, type ParentRuntime } from "./pi-launch.js";
import { ErrorCode, type CancelResult, type CheckResult, type WaitResult } from "./protocol.js";
import { MAX_WAIT_IDS, SUBAGENT_CHILD_ENV, type ResolvedSubagentOptions } from "./subagent-options.js";

/** What spawning needs from Pi's tool context. */
export interface SpawnContext {
  cwd: string;
  model: { provider: string; id: string } | undefined;
  hasUI: boolean;
  ui: { setStatus(key: string, text: string | undefined): void };
  /** Pi's model registry (every model it knows); absent: `model` is passed to the child unchecked. */
  models?: () => readonly KnownModel[];
}

export interface SpawnRequest {
  task: string;
  title?: string | undefined;
  cwd?: string | undefined;
  model?: string | undefined;
}

export interface Spawned {
  childId: string;
  title: string;
  /** 0 when it started at once; else its place in the queue (1 = next). */
  queuePosition: number;
  /** False when handoffd was not connected at spawn (the result is kept and reported once it is). */
  daemonReachable: boolean;
  /** About the model chosen, for the parent model (model-choice.ts): absent when it is a listed one. */
  modelNote?: string;
}

interface Child {
  id: string;
  title: string;
  task: string;
  cwd: string;
  provider: string | undefined;
  model: string | undefined;
  phase: "queued" | "running" | "finished" | "cancelled";
  process?: PiChild | undefined;
  /** `subagent/completed` has landed at handoffd (or nothing is left to report). */
  reported?: boolean;
}

/** Delivered ids of children no longer held, remembered for subagent_cancel at most (then not added). */
const MAX_DELIVERED_IDS = 10_000;
/** Longest title made from a task's first line, chars. */
const TITLE_CHARS = 60;
/** Retry of `subagent/completed` while the daemon is unreachable: first delay and cap, ms. */
const REPORT_RETRY_FIRST_MS = 250;
const REPORT_RETRY_MAX_MS = 10_000;
/** How long session shutdown waits for handoffd to record the children cancelled, ms. */
const SHUTDOWN_CANCEL_MS = 1_000;

export class Subagents {
  private readonly children = new Map<string, Child>();
  private readonly queue: Child[] = [];
  private readonly undelivered = new Set<string>();
  /** Ids of children whose result reached the session (forgotten otherwise). */
  private readonly delivered = new Set<string>();
  /** Wakes the completion retries (aborted and replaced on every connection). */
  private retryNow = new AbortController();
  private running = 0;
  private ctx: SpawnContext | undefined;
  private closed = false;

  constructor(
    private readonly adapter: HandoffAdapter,
    private readonly options: ResolvedSubagentOptions,
    /** The parent Pi's process (how children are started: pi-launch.ts). */
    private readonly runtime: ParentRuntime,
  ) {
    adapter.onConnected(() => this.onConnected());
  }

  async spawn(request: SpawnRequest, ctx: SpawnContext): Promise<Spawned> {
    this.ctx = ctx;
    if (this.closed) throw new Error("subagent_spawn: the session is shutting down");
    const task = request.task;
    if (task.trim() === "") throw new Error("subagent_spawn: `task` is empty");
    piLaunch(this.runtime, this.options.piCli);  // throws when it cannot tell how to start Pi
    const cwd = request.cwd === undefined ? ctx.cwd : isAbsolute(request.cwd) ? request.cwd : resolve(ctx.cwd, request.cwd);
    if (!existsSync(cwd) || !statSync(cwd).isDirectory()) throw new Error(`subagent_spawn: cwd ${cwd} is not a directory`);
    const { provider, model, note } = this.modelFor(request.model, ctx);
    const title = request.title?.trim() || titleOf(task);
    const child: Child = { id: newChildId(), title, task, cwd, provider, model, phase: "queued" };
    // Connected: handoffd must take the child (it may refuse, say, a title too long). Not
    // connected: the child runs anyway, and `started` goes out once the connection is there.
    if (this.adapter.connected) await this.adapter.started(child.id, title).catch(ignoreConnectionLoss);
    this.children.set(child.id, child);
    this.undelivered.add(child.id);
    let queuePosition = 0;
    if (this.running < this.options.maxRunning) this.launch(child);
    else {
      this.queue.push(child);
      queuePosition = this.queue.length;
      this.adapter.progress(child.id, `queued: ${this.options.maxRunning} subagents are running (position ${queuePosition})`);
    }
    this.showStatus();
    return { childId: child.id, title, queuePosition, daemonReachable: this.adapter.connected, ...(note !== undefined && { modelNote: note }) };
  }

  /** Waits for `ids` (default: every undelivered child); what it returns counts as delivered. */
  async wait(ids: string[] | undefined, timeoutMs: number | undefined, signal: AbortSignal | undefined): Promise<{ result: WaitResult; waited: string[]; left: string[] } | undefined> {
    const wanted = ids ?? [...this.undelivered];
    if (wanted.length === 0) return undefined;
    const waited = wanted.slice(0, MAX_WAIT_IDS);
    const options: { timeoutMs?: number; signal?: AbortSignal } = {};
    if (timeoutMs !== undefined) options.timeoutMs = timeoutMs;
    if (signal !== undefined) options.signal = signal;
    const result = await this.adapter.wait(waited, options);
    for (const section of result.sections) this.markDelivered(section.childId);
    for (const id of result.alreadyDelivered ?? []) this.markDelivered(id);
    for (const id of result.cancelled ?? []) this.undelivered.delete(id);
    this.showStatus();
    return { result, waited, left: wanted.slice(MAX_WAIT_IDS) };
  }

  check(id: string, signal?: AbortSignal): Promise<CheckResult> {
    return this.adapter.check(id, signal === undefined ? {} : { signal });
  }

  /**
   * Ends the child's process tree (or drops it from the queue); the daemon records it cancelled.
   * A child whose result was delivered already has nothing to cancel: `result` is undefined.
   */
  async cancel(id: string, signal?: AbortSignal): Promise<{ result: CancelResult | undefined; was: Child["phase"] | "delivered" | "unknown" }> {
    if (this.delivered.has(id)) return { result: undefined, was: "delivered" };
    const child = this.children.get(id);
    const was = child?.phase ?? "unknown";
    if (child !== undefined && (child.phase === "queued" || child.phase === "running")) {
      const queued = this.queue.indexOf(child);
      if (queued >= 0) this.queue.splice(queued, 1);
      child.phase = "cancelled";
      child.process?.kill();
    }
    this.undelivered.delete(id);
    this.forgetIfDone(id);
    this.showStatus();
    const result = await this.adapter.cancel([id], signal === undefined ? {} : { signal });
    return { result, was };
  }

  /** A batch landed in the session (its message_end): its children are delivered. */
  onDelivered(details: HandoffMessageDetails): void {
    for (const section of details.sections) this.markDelivered(section.childId);
    this.showStatus();
  }

  /** Remembers the latest context (for the status line). */
  setContext(ctx: SpawnContext): void {
    this.ctx = ctx;
  }

  /**
   * Session end: every child's process group is killed; the daemon is told they are cancelled.
   * Resolves once it answered (at most SHUTDOWN_CANCEL_MS): await it before the adapter closes.
   */
  async shutdown(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.retryNow.abort();
    const live = [...this.children.values()].filter((child) => child.phase === "queued" || child.phase === "running");
    this.queue.length = 0;
    for (const child of live) {
      child.phase = "cancelled";
      child.process?.kill();
    }
    if (live.length > 0) await this.adapter.cancel(live.map((child) => child.id), { timeoutMs: SHUTDOWN_CANCEL_MS }).catch(() => undefined);
  }

  /** Process-group ids of the running children (for tests and diagnostics). */
  pids(): number[] {
    return [...this.children.values()].flatMap((child) => (child.process?.pid === undefined ? [] : [child.process.pid]));
  }

  // ---- internals ------------------------------------------------------------------------------

  /** A (re)connection: handoffd learns the live children again; retried completions go now. */
  private onConnected(): void {
    if (this.closed) return;
    for (const child of this.children.values())
      if (child.phase === "queued" || child.phase === "running") this.adapter.started(child.id, child.title).catch(() => undefined);
    this.retryNow.abort();
    this.retryNow = new AbortController();
  }

  private markDelivered(id: string): void {
    this.undelivered.delete(id);
    if (this.children.has(id) && this.delivered.size < MAX_DELIVERED_IDS) this.delivered.add(id);
    this.forgetIfDone(id);
  }

  /** Forgets a child that has ended, was reported and is no longer awaited. */
  private forgetIfDone(id: string): void {
    const child = this.children.get(id);
    if (child === undefined || this.undelivered.has(id)) return;
    if (child.phase === "cancelled" || (child.phase === "finished" && child.reported === true)) this.children.delete(id);
  }

  /** The parent's model, or `requested` checked against Pi's registry (refused when unknown there). */
  private modelFor(requested: string | undefined, ctx: SpawnContext): { provider: string | undefined; model: string | undefined; note?: string } {
    if (requested !== undefined && requested.trim() !== "") {
      const models = ctx.models?.() ?? [];
      if (models.length > 0) return chooseModel(requested, models, ctx.model?.provider);
      const slash = requested.indexOf("/");
      // No registry to check against: "provider/id" names both; a bare id stays on the parent's provider.
      if (slash > 0) return { provider: requested.slice(0, slash), model: requested.slice(slash + 1) };
      return { provider: ctx.model?.provider, model: requested };
    }
    if (ctx.model === undefined) throw new Error("subagent_spawn: the session has no model; pass `model`");
    return { provider: ctx.model.provider, model: ctx.model.id };
  }

  private launch(child: Child): void {
    child.phase = "running";
    this.running += 1;
    const spec = {
      launch: piLaunch(this.runtime, this.options.piCli),
      task: child.task,
      cwd: child.cwd,
      extraArgs: this.options.childArgs,
      env: { ...process.env, [SUBAGENT_CHILD_ENV]: "1" },
      timeoutMs: this.options.childTimeoutMs,
      onActivity: (text: string) => void this.adapter.progress(child.id, text),
      ...(child.provider === undefined ? {} : { provider: child.provider }),
      ...(child.model === undefined ? {} : { model: child.model }),
    };
    const process_ = new PiChild(spec);
    child.process = process_;
    void process_.done.then((outcome) => this.finish(child, outcome));
  }

  private async finish(child: Child, outcome: ChildOutcome): Promise<void> {
    this.running -= 1;
    const cancelled = child.phase === "cancelled";
    if (!cancelled) child.phase = "finished";
    child.process = undefined;  // with it the child's final text, once reported below
    this.startQueued();
    this.showStatus();
    if (cancelled || this.closed) return;  // the daemon recorded it cancelled already
    const completion = { childId: child.id, title: child.title, status: outcome.status === "done" ? ("done" as const) : ("error" as const), finalText: outcome.finalText };
    let report: SubagentCompletion = outcome.error === undefined || outcome.status === "done" ? completion : { ...completion, error: outcome.error };
    for (let delay = REPORT_RETRY_FIRST_MS; !this.closed; delay = Math.min(delay * 2, REPORT_RETRY_MAX_MS)) {
      try {
        await this.adapter.completed(report);
        child.reported = true;
        this.forgetIfDone(child.id);
        return;
      } catch (error) {
        // Retried: the daemon unreachable, stopping, overloaded or out of storage. A refusal of the
        // call itself (say a final text over the frame cap) is reported once as the child's error,
        // so the parent still learns how it ended; a conflict means an earlier attempt landed.
        if (!retryable(error)) {
          if ((report.status === "error" && report.finalText === "") || (error instanceof HandoffError && error.code === ErrorCode.Conflict)) {
            child.reported = true;
            this.forgetIfDone(child.id);
            return;
          }
          report = { ...completion, status: "error", finalText: "", error: `handoffd refused the child's result: ${String((error as Error).message)}` };
          continue;
        }
        await sleepUnless(delay, this.retryNow.signal);
      }
    }
  }

  private startQueued(): void {
    while (this.running < this.options.maxRunning && !this.closed) {
      const next = this.queue.shift();
      if (next === undefined) return;
      this.launch(next);
    }
    this.queue.forEach((child, index) => this.adapter.progress(child.id, `queued: ${this.options.maxRunning} subagents are running (position ${index + 1})`));
  }

  private showStatus(): void {
    const key = this.options.statusKey;
    const ctx = this.ctx;
    if (key === null || ctx === undefined || !ctx.hasUI) return;
    let running = 0;
    let pending = 0;
    for (const child of this.children.values()) {
      if (child.phase === "running") running += 1;
      else if (child.phase === "finished" && this.undelivered.has(child.id)) pending += 1;
    }
    const parts = [
      running > 0 ? `${running} running` : "",
      this.queue.length > 0 ? `${this.queue.length} queued` : "",
      pending > 0 ? `${pending} pending` : "",
    ].filter((part) => part !== "");
    try {
      ctx.ui.setStatus(key, parts.length === 0 ? undefined : `subagents: ${parts.join(", ")}`);
    } catch {
      // A stale context after session replacement; the status is cosmetic.
    }
  }
}

/** A connection lost under `started` changes nothing: it goes again on the next connection. */
function ignoreConnectionLoss(error: unknown): void {
  if (error instanceof HandoffError && (error.kind === "connection-lost" || error.kind === "not-connected")) return;
  throw error;
}

/** Sleeps `ms`, or less when `signal` is aborted (never rejects). */
function sleepUnless(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((done) => {
    const timer = setTimeout(finish, ms);
    function finish(): void {
      clearTimeout(timer);
      signal.removeEventListener("abort", finish);
      done();
    }
    if (signal.aborted) finish();
    else signal.addEventListener("abort", finish, { once: true });
  });
}

function newChildId(): string {
  return `sa-${randomBytes(3).toString("hex")}`;
}

function titleOf(task: string): string {
  const first = task.trim().split("\n", 1)[0] ?? "";
  return first.length <= TITLE_CHARS ? first : `${first.slice(0, TITLE_CHARS - 1)}…`;
}

function retryable(error: unknown): boolean {
  if (!(error instanceof HandoffError)) return true;
  if (error.kind !== "rpc") return true;
  return error.code === ErrorCode.StorageFailed || error.code === ErrorCode.ShuttingDown || error.code === ErrorCode.Overloaded;
}
