// The subagents of one Pi session: child Pi processes it spawned, reported to handoffd.
//
// A child is a conversation of turns. Its first turn runs the task; each subagent_send adds a
// turn that continues the child's own Pi session (kept privately: child-sessions.ts) with the
// message as its next prompt, on the same model, cwd and limits. Each turn is one result at
// handoffd: turn 1 under the child's id (`sa-1a2b3c`), turn n under `sa-1a2b3c.n` with the title
// `TITLE (turn n)`, so the parent can tell which turn of which child a section is.
//
// Contract:
// - `spawn` and `send` report `subagent/started` for the new turn first when connected (so
//   check/wait know it), then run it at once, or queue it: behind the child's own previous turn
//   while that is not over, and behind other children when `maxRunning` turns run; queued turns
//   start in order. With handoffd unreachable they do not wait: the turn runs all the same.
// - After every (re)connection to handoffd, `subagent/started` goes again for every running and
//   queued turn (a restarted daemon has forgotten them; a known child is unchanged by it), and
//   completions being retried are sent at once.
// - Each turn's latest activity goes to the daemon as `subagent/progress`; its end as
//   `subagent/completed` (status done/error, the exact final text), retried until the daemon takes
//   it, so a result is not lost to a daemon restart. A cancelled child is reported by `cancel`.
// - "Undelivered" turns are the ones whose result has not reached the session yet (not returned
//   by a wait, not seen landing in an auto-delivery, not cancelled): `wait()` with no ids waits for
//   those; with a child's id, for its undelivered turns (else its latest).
// - With no handoffd reachable or startable, `wait()` waits for the covered turns here and returns
//   those whose text it still holds (not yet taken by handoffd) bounded by local-bound.ts, each
//   with its head and tail and its full text in a private copy; they count as delivered, and
//   handoffd, once back, is told to drop them (`subagent/cancel`), so none is delivered twice.
//   So are the results still held here when the parent goes idle then: one delivery into the
//   session, as handoffd's auto-delivery would make, within its caps (24 KiB / 48 KiB).
// - A send to a cancelled or forgotten child, or one this session never had, is refused, naming
//   which. A child is forgotten (its session files removed) `keepMs` after it last had nothing
//   running and nothing undelivered, when it is cancelled, and at session shutdown.
// - The status line shows running, queued and pending (finished, not delivered) turns.
// - `shutdown` kills every child's process group and tells handoffd they are cancelled (resolving
//   once it answered, or SHUTDOWN_CANCEL_MS passed); the guard kills them anyway if Pi dies.
// - Memory: a turn's final text is dropped once handoffd took it (or it was delivered without
//   handoffd), its prompt once it started; a forgotten child leaves a one-line summary for
//   subagent_list and refusals (at most 10,000).
import { randomBytes } from "node:crypto";
import { existsSync, statSync } from "node:fs";
import { isAbsolute, resolve } from "node:path";

import { ChildSessions } from "./child-sessions.js";
import { HandoffError } from "./errors.js";
import type { HandoffAdapter, HandoffMessageDetails, SubagentCompletion } from "./pi-adapter.js";
import { chooseModel, type KnownModel } from "./model-choice.js";
import { PiChild, type ChildOutcome } from "./pi-child.js";
import { piLaunch, type ParentRuntime } from "./pi-launch.js";
import { ErrorCode, type CancelResult, type CheckResult, type Section, type WaitResult } from "./protocol.js";
import { MAX_WAIT_IDS, SUBAGENT_CHILD_ENV, type ResolvedSubagentOptions } from "./subagent-options.js";
import { listChildren, type ChildLine } from "./subagent-list.js";
import { AUTO_CAPS, localBatch, type LocalInput } from "./local-bound.js";

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

export interface Sent {
  childId: string;
  /** The child's title (without the turn). */
  title: string;
  turn: number;
  /** The id and title of this turn's result at handoffd. */
  turnId: string;
  turnTitle: string;
  /** The child's previous turn still runs (or waits): this one starts when it ends. */
  behind: boolean;
  /** 0 when it started at once or waits behind its own child; else its place in the queue. */
  queuePosition: number;
  daemonReachable: boolean;
}

/** One turn: one run of the child Pi, one result at handoffd. */
interface Turn {
  /** handoffd's child id: the child's id for turn 1, `<id>.<n>` after. */
  id: string;
  n: number;
  title: string;
  /** Its prompt; "" once it started. */
  prompt: string;
  child: Child;
  /** waiting: behind the child's previous turn; queued: behind `maxRunning` others. */
  phase: "waiting" | "queued" | "running" | "finished" | "cancelled";
  process?: PiChild | undefined;
  /** `subagent/completed` has landed at handoffd (or nothing is left to report). */
  reported?: boolean;
  status?: "done" | "error";
  bytes?: number;
  lines?: number;
  /** The full text's file, once a delivery cut it. */
  artifact?: string;
  /** Its result while handoffd has not taken it (what a wait without handoffd shows), and when it ended. */
  held?: LocalInput | undefined;
  endedAt?: number;
  /** Delivered without handoffd (a wait, or a delivery when idle): handoffd is to drop it, not deliver it. */
  local?: boolean;
  /** Aborts its `subagent/completed` still waiting for a connection, when it is delivered without handoffd. */
  reportAbort?: AbortController;
}

interface Child {
  id: string;
  title: string;
  cwd: string;
  provider: string | undefined;
  model: string | undefined;
  /** The child's Pi session file; undefined: not kept (`sessionError` says why), no sends. */
  session: string | undefined;
  sessionError?: string;
  turns: Turn[];
  forgetTimer?: NodeJS.Timeout | undefined;
}

/** What is left of a child that was cancelled or forgotten: enough to list it and to refuse a send. */
interface Closed {
  title: string;
  turns: number;
  how: "cancelled" | "forgotten";
}

/** Children closed (cancelled or forgotten) remembered, at most (then not added). */
const MAX_CLOSED = 10_000;
/** handoffd's longest title, bytes (`--max-title-bytes`' default). */
const MAX_TITLE_BYTES = 1024;
/** Longest title made from a task's first line, chars. */
const TITLE_CHARS = 60;
/** Retry of `subagent/completed` while the daemon is unreachable: first delay and cap, ms. */
const REPORT_RETRY_FIRST_MS = 250;
const REPORT_RETRY_MAX_MS = 10_000;
/**
 * How long after a turn ends or the parent goes idle a delivery without handoffd is made, ms: a
 * reconnection under way (its backoff starts at 100 ms) gets the result to handoffd first.
 */
const LOCAL_DELIVERY_DELAY_MS = 1_000;
/** How long session shutdown waits for handoffd to record the children cancelled, ms. */
const SHUTDOWN_CANCEL_MS = 1_000;

export class Subagents {
  private readonly children = new Map<string, Child>();
  /** Every live turn by its handoffd id. */
  private readonly turns = new Map<string, Turn>();
  private readonly closedChildren = new Map<string, Closed>();
  private readonly queue: Turn[] = [];
  private readonly undelivered = new Set<string>();
  private readonly sessions: ChildSessions;
  /** Wakes the completion retries (aborted and replaced on every connection). */
  private retryNow = new AbortController();
  private running = 0;
  /** Woken whenever a turn ends (a wait without handoffd waits on it). */
  private readonly turnEndWaiters = new Set<() => void>();
  /** A delivery without handoffd is due, or on its way. */
  private localDeliveryTimer: NodeJS.Timeout | undefined;
  private localDelivery = false;
  private ended = 0;
  private ctx: SpawnContext | undefined;
  private closed = false;

  constructor(
    private readonly adapter: HandoffAdapter,
    private readonly options: ResolvedSubagentOptions,
    /** The parent Pi's process (how children are started: pi-launch.ts). */
    private readonly runtime: ParentRuntime,
  ) {
    this.sessions = new ChildSessions(options.sessionRoot);
    adapter.onConnected(() => this.onConnected());
    adapter.onIdle(() => this.deliverHeldSoon());
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
    const id = newChildId();
    const child: Child = { id, title, cwd, provider, model, session: undefined, turns: [] };
    const turn: Turn = { id, n: 1, title, prompt: task, child, phase: "queued" };
    // Connected: handoffd must take the child (it may refuse, say, a title too long). Not
    // connected: the child runs anyway, and `started` goes out once the connection is there.
    if (this.adapter.connected) await this.adapter.started(id, title).catch(ignoreConnectionLoss);
    try {
      child.session = this.sessions.create(id);
    } catch (error) {
      // The child still runs; only subagent_send to it is refused, saying why.
      child.sessionError = `its conversation could not be kept (${(error as Error).message})`;
    }
    this.children.set(id, child);
    this.addTurn(turn);
    const queuePosition = this.schedule(turn);
    this.showStatus();
    return { childId: id, title, queuePosition, daemonReachable: this.adapter.connected, ...(note !== undefined && { modelNote: note }) };
  }

  /** Continues a child's conversation with `message` as a new turn (queued behind its current one). */
  async send(id: string, message: string, ctx: SpawnContext): Promise<Sent> {
    this.ctx = ctx;
    if (this.closed) throw new Error("subagent_send: the session is shutting down");
    if (message.trim() === "") throw new Error("subagent_send: `message` is empty");
    const child = this.childOf(id);
    if (child === undefined) {
      const closed = this.closedChildren.get(baseId(id));
      if (closed?.how === "cancelled")
        throw new Error(`subagent_send: subagent ${baseId(id)} was cancelled; its conversation is closed. Start a new one with subagent_spawn.`);
      if (closed?.how === "forgotten")
        throw new Error(
          `subagent_send: subagent ${baseId(id)} was forgotten: a conversation is kept ${formatDuration(this.options.keepMs)} after its last result was delivered. ` +
            "Start a new one with subagent_spawn (its earlier answers and their full-text files are still yours to read).",
        );
      throw new Error(`subagent_send: no subagent ${id} in this session (subagent_list shows them)`);
    }
    if (child.session === undefined) throw new Error(`subagent_send: subagent ${child.id}: ${child.sessionError ?? "its conversation was not kept"}`);
    this.keep(child);
    const n = child.turns.length + 1;
    const previous = child.turns[child.turns.length - 1];
    const turn: Turn = { id: `${child.id}.${n}`, n, title: turnTitle(child.title, n), prompt: message, child, phase: "waiting" };
    // Added before the await: sends made side by side (Pi runs a reply's tool calls together) get
    // turns n, n + 1, ... in order, each behind the one before.
    this.addTurn(turn);
    // The id and title are ours and valid: whatever handoffd answers, the turn runs and its
    // completion (which needs no `started`) is retried until handoffd takes it.
    if (this.adapter.connected) await this.adapter.started(turn.id, turn.title).catch(() => undefined);
    if (turn.phase === "cancelled") throw new Error(`subagent_send: subagent ${child.id} was cancelled meanwhile; its conversation is closed.`);
    // Meanwhile the previous turn may have ended, and started or queued this one.
    const behind = turn.phase === "waiting" && previous !== undefined && isLive(previous);
    let queuePosition = turn.phase === "queued" ? this.queue.indexOf(turn) + 1 : 0;
    if (behind) this.adapter.progress(turn.id, `waiting for turn ${n - 1} of ${child.id} to end`);
    else if (turn.phase === "waiting") queuePosition = this.schedule(turn);
    this.showStatus();
    return { childId: child.id, title: child.title, turn: n, turnId: turn.id, turnTitle: turn.title, behind, queuePosition, daemonReachable: this.adapter.connected };
  }

  /**
   * Waits for `ids` (default: every undelivered turn; a child's id: its undelivered turns, else
   * its latest); what it returns counts as delivered.
   */
  async wait(ids: string[] | undefined, timeoutMs: number | undefined, signal: AbortSignal | undefined): Promise<{ result: WaitResult; waited: string[]; left: string[] } | undefined> {
    const wanted = ids === undefined ? [...this.undelivered] : [...new Set(ids.flatMap((id) => this.turnIdsFor(id)))];
    if (wanted.length === 0) return undefined;
    const waited = wanted.slice(0, MAX_WAIT_IDS);
    const options: { timeoutMs?: number; signal?: AbortSignal } = {};
    if (timeoutMs !== undefined) options.timeoutMs = timeoutMs;
    if (signal !== undefined) options.signal = signal;
    let result: WaitResult;
    try {
      result = await this.adapter.wait(waited, options);
    } catch (error) {
      if (!(error instanceof HandoffError) || (error.kind !== "not-connected" && error.kind !== "connection-lost")) throw error;
      // "subagent/wait: handoffd is unreachable (WHY); reconnecting in the background": WHY is the reason.
      const reason = /handoffd is unreachable \((.*)\); reconnecting/.exec(error.message)?.[1] ?? error.message;
      result = await this.waitWithoutDaemon(waited, timeoutMs, signal, reason);
    }
    for (const section of result.sections) this.markDelivered(section.childId, section);
    for (const id of result.alreadyDelivered ?? []) this.markDelivered(id);
    for (const id of result.cancelled ?? []) this.undelivered.delete(id);
    this.showStatus();
    return { result, waited, left: wanted.slice(MAX_WAIT_IDS) };
  }

  /**
   * `wait` with no handoffd to be had: waits here for the covered turns to end (at most
   * `timeoutMs`; `signal` ends it, taking nothing), then bounds the results this session still
   * holds (local-bound.ts) and marks them delivered here. Turns handoffd took before it went away
   * are named: they come when it is back.
   */
  private async waitWithoutDaemon(ids: string[], timeoutMs: number | undefined, signal: AbortSignal | undefined, reason: string): Promise<WaitResult> {
    const deadline = timeoutMs === undefined ? undefined : Date.now() + timeoutMs;
    const covered = (): Turn[] => ids.flatMap((id) => this.turns.get(id) ?? []);
    let timedOut = false;
    while (covered().some(isLive)) {
      const left = deadline === undefined ? undefined : deadline - Date.now();
      if (left !== undefined && left <= 0) {
        timedOut = true;
        break;
      }
      await this.nextTurnEnd(left, signal);
    }
    const turns = covered();
    // Not one a delivery without handoffd is putting into the session right now (turn.local).
    const held = turns.filter((turn) => turn.held !== undefined && turn.local !== true && this.undelivered.has(turn.id)).sort((a, b) => (a.endedAt ?? 0) - (b.endedAt ?? 0));
    const batch = localBatch(held.map((turn) => turn.held as LocalInput), { reason });
    for (const id of batch.delivered) {
      const turn = this.turns.get(id);
      if (turn === undefined) continue;
      deliverHere(turn);
      turn.held = undefined;
    }
    const atDaemon = turns.filter((turn) => turn.phase === "finished" && turn.held === undefined && turn.local !== true && this.undelivered.has(turn.id)).map((turn) => turn.id);
    const note = atDaemon.length === 0 ? "" : `Kept by handoffd, which is not reachable now: ${atDaemon.join(", ")}; delivered when it is back (or by a later subagent_wait).`;
    const known = new Set(turns.map((turn) => turn.id));
    return {
      sections: batch.sections.filter((section) => batch.delivered.includes(section.childId)),
      text: [batch.text, note].filter((part) => part !== "").join("\n\n"),
      deferred: batch.deferred,
      budget: batch.budget,
      timedOut,
      pending: turns.filter(isLive).map((turn) => turn.id),
      cancelled: ids.filter((id) => !known.has(id) && this.closedChildren.get(baseId(id))?.how === "cancelled"),
    };
  }

  /** Resolves when a turn ends or `timeoutMs` passes; rejects "aborted" on `signal`. */
  private nextTurnEnd(timeoutMs: number | undefined, signal: AbortSignal | undefined): Promise<void> {
    return new Promise((resolve, reject) => {
      const stop = (): void => {
        clearTimeout(timer);
        this.turnEndWaiters.delete(done);
        signal?.removeEventListener("abort", aborted);
      };
      const done = (): void => {
        stop();
        resolve();
      };
      const aborted = (): void => {
        stop();
        reject(new HandoffError("aborted", "subagent/wait: aborted"));
      };
      const timer = timeoutMs === undefined ? undefined : setTimeout(done, timeoutMs);
      if (signal?.aborted === true) return aborted();
      signal?.addEventListener("abort", aborted, { once: true });
      this.turnEndWaiters.add(done);
    });
  }

  private turnEnded(): void {
    for (const wake of [...this.turnEndWaiters]) wake();
  }

  /** handoffd's check of a turn (a child's id: its latest turn), with the turn's local phase. */
  async check(id: string, signal?: AbortSignal): Promise<{ check: CheckResult; turn: number | undefined; waiting: boolean }> {
    const turn = this.children.get(id)?.turns.at(-1) ?? this.turns.get(id);
    const check = await this.adapter.check(turn?.id ?? id, signal === undefined ? {} : { signal });
    return { check, turn: turn?.n, waiting: turn?.phase === "waiting" || turn?.phase === "queued" };
  }

  /**
   * Ends the child's running turn (and drops its queued ones); the daemon records its undelivered
   * turns cancelled; the child is closed: its session is removed and sends are refused. A child
   * whose results were all delivered already has nothing to cancel: `result` is undefined.
   */
  async cancel(id: string, signal?: AbortSignal): Promise<{ result: CancelResult | undefined; was: Turn["phase"] | "delivered" | "cancelled" | "forgotten" | "unknown"; childId: string }> {
    const child = this.childOf(id);
    if (child === undefined) {
      const closed = this.closedChildren.get(baseId(id));
      if (closed?.how === "forgotten") return { result: undefined, was: "delivered", childId: baseId(id) };
      if (closed?.how === "cancelled") return { result: undefined, was: "cancelled", childId: baseId(id) };
      const result = await this.adapter.cancel([id], signal === undefined ? {} : { signal });
      return { result, was: "unknown", childId: id };
    }
    const latest = child.turns.at(-1);
    const live = child.turns.filter(isLive);
    const was = live[0]?.phase ?? (latest !== undefined && this.undelivered.has(latest.id) ? latest.phase : "delivered");
    const toCancel = child.turns.filter((turn) => this.undelivered.has(turn.id)).map((turn) => turn.id);
    for (const turn of live) {
      const queued = this.queue.indexOf(turn);
      if (queued >= 0) this.queue.splice(queued, 1);
      turn.phase = "cancelled";
      turn.process?.kill();
    }
    this.forget(child, "cancelled");
    this.turnEnded();
    this.showStatus();
    if (toCancel.length === 0) return { result: undefined, was, childId: child.id };
    const result = await this.adapter.cancel(toCancel, signal === undefined ? {} : { signal });
    return { result, was, childId: child.id };
  }

  /** Every child of this session, one line each, at most 2 KiB (subagent-list.ts). */
  list(): string {
    const lines: ChildLine[] = [];
    for (const child of this.children.values()) {
      const current = child.turns.find(isLive) ?? (child.turns.at(-1) as Turn);
      const line: ChildLine = { id: child.id, title: child.title, state: this.stateOf(current), turn: current.n };
      if (current.bytes !== undefined) {
        line.bytes = current.bytes;
        line.lines = current.lines;
      }
      if (current.status === "error") line.error = true;
      if (current.artifact !== undefined) line.artifact = current.artifact;
      const queuedTurns = child.turns.filter((turn) => turn.n > current.n && isLive(turn)).length;
      if (queuedTurns > 0) line.queuedTurns = queuedTurns;
      lines.push(line);
    }
    let forgotten = 0;
    for (const [id, closed] of this.closedChildren) {
      if (closed.how === "cancelled") lines.push({ id, title: closed.title, state: "cancelled", turn: closed.turns });
      else forgotten += 1;
    }
    return listChildren(lines, forgotten);
  }

  /** A batch landed in the session (its message_end): its turns are delivered. */
  onDelivered(details: HandoffMessageDetails): void {
    for (const section of details.sections) this.markDelivered(section.childId, section);
    this.showStatus();
  }

  /** Remembers the latest context (for the status line). */
  setContext(ctx: SpawnContext): void {
    this.ctx = ctx;
  }

  /**
   * Session end: every child's process group is killed; the daemon is told they are cancelled;
   * the children's sessions are removed. Resolves once the daemon answered (at most
   * SHUTDOWN_CANCEL_MS): await it before the adapter closes.
   */
  async shutdown(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.retryNow.abort();
    clearTimeout(this.localDeliveryTimer);
    const live = [...this.turns.values()].filter(isLive);
    this.queue.length = 0;
    for (const turn of live) {
      turn.phase = "cancelled";
      turn.process?.kill();
    }
    for (const child of this.children.values()) clearTimeout(child.forgetTimer);
    try {
      this.sessions.removeAll();
    } catch {
      // Best effort at shutdown; the directory is private and under the user's runtime directory.
    }
    if (live.length > 0) await this.adapter.cancel(live.map((turn) => turn.id), { timeoutMs: SHUTDOWN_CANCEL_MS }).catch(() => undefined);
  }

  /** Process-group ids of the running turns (for tests and diagnostics). */
  pids(): number[] {
    return [...this.turns.values()].flatMap((turn) => (turn.process?.pid === undefined ? [] : [turn.process.pid]));
  }

  // ---- internals ------------------------------------------------------------------------------

  /** A (re)connection: handoffd learns the live turns again; retried completions go now. */
  private onConnected(): void {
    if (this.closed) return;
    for (const turn of this.turns.values()) if (isLive(turn)) this.adapter.started(turn.id, turn.title).catch(() => undefined);
    this.retryNow.abort();
    this.retryNow = new AbortController();
  }

  private addTurn(turn: Turn): void {
    turn.child.turns.push(turn);
    this.turns.set(turn.id, turn);
    this.undelivered.add(turn.id);
  }

  /** Runs `turn` now, or queues it behind `maxRunning` others; returns its queue position (0: runs). */
  private schedule(turn: Turn): number {
    if (this.running < this.options.maxRunning) {
      this.launch(turn);
      return 0;
    }
    turn.phase = "queued";
    this.queue.push(turn);
    this.adapter.progress(turn.id, `queued: ${this.options.maxRunning} subagents are running (position ${this.queue.length})`);
    return this.queue.length;
  }

  /** The child a child's id or one of its turn ids names. */
  private childOf(id: string): Child | undefined {
    return this.children.get(id) ?? this.turns.get(id)?.child;
  }

  /** What `id` means to a wait: a turn, a child's undelivered turns (else its latest), or itself. */
  private turnIdsFor(id: string): string[] {
    const child = this.children.get(id);  // before its turns: turn 1 has the child's id
    if (child === undefined) return [id];
    const open = child.turns.filter((turn) => this.undelivered.has(turn.id)).map((turn) => turn.id);
    return open.length > 0 ? open : [(child.turns.at(-1) as Turn).id];
  }

  private stateOf(turn: Turn): ChildLine["state"] {
    if (turn.phase === "waiting" || turn.phase === "queued") return "queued";
    if (turn.phase === "running") return "running";
    if (turn.phase === "cancelled") return "cancelled";
    return this.undelivered.has(turn.id) ? "completed" : "delivered";
  }

  private markDelivered(id: string, section?: Omit<Section, "text">): void {
    this.undelivered.delete(id);
    const turn = this.turns.get(id);
    if (turn === undefined) return;
    const path = section?.artifact?.saved === true ? section.artifact.path : undefined;
    if (typeof path === "string") turn.artifact = path;
    if (turn.bytes === undefined && section !== undefined) {
      turn.bytes = section.totalBytes;
      turn.lines = section.totalLines;
    }
    this.keepOrForget(turn.child);
  }

  /** A child with nothing running and nothing undelivered is forgotten `keepMs` from now. */
  private keepOrForget(child: Child): void {
    clearTimeout(child.forgetTimer);
    child.forgetTimer = undefined;
    if (this.closed || !this.children.has(child.id)) return;
    if (child.turns.some((turn) => isLive(turn) || this.undelivered.has(turn.id) || (turn.phase === "finished" && turn.reported !== true))) return;
    child.forgetTimer = setTimeout(() => this.forget(child, "forgotten"), this.options.keepMs);
    child.forgetTimer.unref();
  }

  /** Stops the forget timer while a new turn is added. */
  private keep(child: Child): void {
    clearTimeout(child.forgetTimer);
    child.forgetTimer = undefined;
  }

  /** Removes the child's session files and everything held of it but a one-line summary. */
  private forget(child: Child, how: Closed["how"]): void {
    clearTimeout(child.forgetTimer);
    this.children.delete(child.id);
    for (const turn of child.turns) {
      this.turns.delete(turn.id);
      this.undelivered.delete(turn.id);
    }
    if (this.closedChildren.size < MAX_CLOSED) this.closedChildren.set(child.id, { title: child.title, turns: child.turns.length, how });
    try {
      this.sessions.remove(child.id);
    } catch {
      // A private directory left behind is removed with the parent's at shutdown.
    }
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

  private launch(turn: Turn): void {
    const child = turn.child;
    turn.phase = "running";
    this.running += 1;
    const spec = {
      launch: piLaunch(this.runtime, this.options.piCli),
      task: turn.prompt,
      cwd: child.cwd,
      extraArgs: this.options.childArgs,
      env: { ...process.env, [SUBAGENT_CHILD_ENV]: "1" },
      timeoutMs: this.options.childTimeoutMs,
      onActivity: (text: string) => void this.adapter.progress(turn.id, text),
      ...(child.session === undefined ? {} : { session: child.session }),
      ...(child.provider === undefined ? {} : { provider: child.provider }),
      ...(child.model === undefined ? {} : { model: child.model }),
    };
    turn.prompt = "";
    const process_ = new PiChild(spec);
    turn.process = process_;
    void process_.done.then((outcome) => this.finish(turn, outcome));
  }

  private async finish(turn: Turn, outcome: ChildOutcome): Promise<void> {
    this.running -= 1;
    const cancelled = turn.phase === "cancelled";
    if (!cancelled) turn.phase = "finished";
    turn.process = undefined;  // with it the turn's final text, once reported below
    // The child's next turn (a send made while this one ran) goes now, its session complete.
    const next = turn.child.turns[turn.n];
    if (!cancelled && next?.phase === "waiting") this.schedule(next);
    this.startQueued();
    this.showStatus();
    if (cancelled || this.closed) return;  // the daemon recorded it cancelled already
    const completion = { childId: turn.id, title: turn.title, status: outcome.status === "done" ? ("done" as const) : ("error" as const), finalText: outcome.finalText };
    const report: SubagentCompletion = outcome.error === undefined || outcome.status === "done" ? completion : { ...completion, error: outcome.error };
    turn.status = completion.status;
    turn.held = { ...report, title: turn.title };
    turn.endedAt = ++this.ended;
    this.turnEnded();
    this.deliverHeldSoon();
    await this.report(turn, report);
  }

  /**
   * `subagent/completed` for the turn, retried until handoffd takes it; for a turn delivered here
   * meanwhile (without handoffd), `subagent/cancel` instead, so that handoffd drops it.
   */
  private async report(turn: Turn, completion: SubagentCompletion): Promise<void> {
    let report = completion;
    for (let delay = REPORT_RETRY_FIRST_MS; !this.closed; delay = Math.min(delay * 2, REPORT_RETRY_MAX_MS)) {
      try {
        // Delivered here by a wait without handoffd: handoffd drops it (if it has it) instead.
        if (turn.local === true) {
          await this.adapter.cancel([turn.id]);
          this.reported(turn, undefined, undefined);
          return;
        }
        // A call made while handoffd is down waits for the connection; delivered here meanwhile,
        // it is aborted before it is sent (deliverHere), so handoffd never gets it to deliver again.
        turn.reportAbort = new AbortController();
        const taken = await this.adapter.completed(report, { signal: turn.reportAbort.signal });
        if (deliveredHere(turn)) continue;  // delivered here while the report was on its way
        this.reported(turn, taken.bytes, taken.lines);
        return;
      } catch (error) {
        if (turn.local === true && !retryable(error)) {
          this.reported(turn, undefined, undefined);
          return;
        }
        // Retried: the daemon unreachable, stopping, overloaded or out of storage. A refusal of the
        // call itself (say a final text over the frame cap) is reported once as the child's error,
        // so the parent still learns how it ended; a conflict means an earlier attempt landed.
        if (!retryable(error)) {
          if ((report.status === "error" && report.finalText === "") || (error instanceof HandoffError && error.code === ErrorCode.Conflict)) {
            this.reported(turn, undefined, undefined);
            return;
          }
          report = { ...completion, status: "error", finalText: "", error: `handoffd refused the child's result: ${String((error as Error).message)}` };
          turn.status = "error";
          continue;
        }
        await sleepUnless(delay, this.retryNow.signal);
      }
    }
  }

  /** Auto-delivery without handoffd, LOCAL_DELIVERY_DELAY_MS from now (once at a time). */
  private deliverHeldSoon(): void {
    if (this.localDeliveryTimer !== undefined || this.closed) return;
    this.localDeliveryTimer = setTimeout(() => {
      this.localDeliveryTimer = undefined;
      void this.deliverHeld();
    }, LOCAL_DELIVERY_DELAY_MS);
    this.localDeliveryTimer.unref();
  }

  /**
   * The parent is idle and handoffd cannot be had: the finished results it has not received and
   * handoffd has not taken are bounded here (local-bound.ts, the auto-delivery caps) and put into
   * the session as one delivery; handoffd, once back, drops them (see `report`). A delivery Pi
   * refuses leaves them as they were, to be reported or delivered later.
   */
  private async deliverHeld(): Promise<void> {
    const reason = this.adapter.unreachableReason;
    if (this.closed || this.localDelivery || reason === undefined || !this.adapter.idle) return;
    const held = [...this.turns.values()]
      .filter((turn) => turn.held !== undefined && turn.local !== true && this.undelivered.has(turn.id))
      .sort((a, b) => (a.endedAt ?? 0) - (b.endedAt ?? 0));
    if (held.length === 0) return;
    const batch = localBatch(held.map((turn) => turn.held as LocalInput), { reason, caps: AUTO_CAPS });
    const sent = held.filter((turn) => batch.delivered.includes(turn.id));
    if (sent.length === 0) return;  // nothing could be shown (no private copy): it waits for handoffd
    const inputs = sent.map((turn) => turn.held as LocalInput);
    for (const turn of sent) deliverHere(turn);  // not reported to handoffd while it lands
    this.localDelivery = true;
    try {
      await this.adapter.deliverLocal({
        sections: batch.sections.filter((section) => batch.delivered.includes(section.childId)),
        text: batch.text,
        deferred: batch.deferred,
        budget: batch.budget,
      });
      for (const turn of sent) turn.held = undefined;  // its message_end marked it delivered
    } catch {
      sent.forEach((turn, i) => {
        turn.local = false;
        turn.held = inputs[i];
        if (turn.reported === true && turn.held !== undefined) {
          turn.reported = false;
          const { error, ...rest } = turn.held;
          void this.report(turn, error === undefined ? rest : { ...rest, error });
        }
      });
    } finally {
      this.localDelivery = false;
    }
    if (batch.deferred > 0) this.deliverHeldSoon();
  }

  private reported(turn: Turn, bytes: number | undefined, lines: number | undefined): void {
    turn.reported = true;
    turn.held = undefined;
    if (bytes !== undefined && lines !== undefined) {
      turn.bytes = bytes;
      turn.lines = lines;
    }
    this.keepOrForget(turn.child);
  }

  private startQueued(): void {
    while (this.running < this.options.maxRunning && !this.closed) {
      const next = this.queue.shift();
      if (next === undefined) return;
      this.launch(next);
    }
    this.queue.forEach((turn, index) => this.adapter.progress(turn.id, `queued: ${this.options.maxRunning} subagents are running (position ${index + 1})`));
  }

  private showStatus(): void {
    const key = this.options.statusKey;
    const ctx = this.ctx;
    if (key === null || ctx === undefined || !ctx.hasUI) return;
    let running = 0;
    let followUps = 0;
    let waiting = 0;
    let pending = 0;
    for (const turn of this.turns.values()) {
      if (turn.phase === "running") {
        running += 1;
        if (turn.n > 1) followUps += 1;
      } else if (turn.phase === "waiting") waiting += 1;
      else if (turn.phase === "finished" && this.undelivered.has(turn.id)) pending += 1;
    }
    const parts = [
      running > 0 ? `${running} running${followUps > 0 ? ` (${followUps} on a later turn)` : ""}` : "",
      this.queue.length > 0 ? `${this.queue.length} queued` : "",
      waiting > 0 ? `${waiting} turn${waiting === 1 ? "" : "s"} waiting` : "",
      pending > 0 ? `${pending} pending` : "",
    ].filter((part) => part !== "");
    try {
      ctx.ui.setStatus(key, parts.length === 0 ? undefined : `subagents: ${parts.join(", ")}`);
    } catch {
      // A stale context after session replacement; the status is cosmetic.
    }
  }
}

/** Marks the turn delivered without handoffd: its report waiting for a connection is not sent. */
function deliverHere(turn: Turn): void {
  turn.local = true;
  turn.reportAbort?.abort();
}

/** Delivered without handoffd (read through a call: it changes across awaits). */
function deliveredHere(turn: Turn): boolean {
  return turn.local === true;
}

function isLive(turn: Turn): boolean {
  return turn.phase === "waiting" || turn.phase === "queued" || turn.phase === "running";
}

/** A child's id from one of its turn ids (`sa-1a2b3c.2` -> `sa-1a2b3c`); other ids unchanged. */
function baseId(id: string): string {
  return id.replace(/^(sa-[0-9a-f]+)\.\d+$/, "$1");
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

/** `TITLE (turn n)`, the title cut short when that would pass handoffd's 1024 bytes. */
function turnTitle(title: string, n: number): string {
  const suffix = ` (turn ${n})`;
  let kept = title;
  while (Buffer.byteLength(kept + suffix) > MAX_TITLE_BYTES) kept = `${[...kept].slice(0, -2).join("")}…`;
  return kept + suffix;
}

function titleOf(task: string): string {
  const first = task.trim().split("\n", 1)[0] ?? "";
  return first.length <= TITLE_CHARS ? first : `${first.slice(0, TITLE_CHARS - 1)}…`;
}

/** "1 h", "90 s", "250 ms". */
export function formatDuration(ms: number): string {
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000} h`;
  if (ms % 60_000 === 0) return `${ms / 60_000} min`;
  if (ms % 1_000 === 0) return `${ms / 1_000} s`;
  return `${ms} ms`;
}

function retryable(error: unknown): boolean {
  if (!(error instanceof HandoffError)) return true;
  if (error.kind !== "rpc") return true;
  return error.code === ErrorCode.StorageFailed || error.code === ErrorCode.ShuttingDown || error.code === ErrorCode.Overloaded;
}
