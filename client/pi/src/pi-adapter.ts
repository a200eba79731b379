// The Pi side of handoff: makes a Pi session the parent endpoint of its subagents' results.
//
// - On `session_start` it connects to handoffd (in the background, reconnecting when the daemon
//   restarts) and registers the parent: parentId = options.parentId, else Pi's session id.
// - It answers the daemon's `context/usage` with `ctx.getContextUsage()`: `undefined` -> null,
//   and `tokens: null` (right after a compaction) passed through as it is, so the daemon falls
//   back to its static caps instead of guessing.
// - It reports "busy" on `agent_start` and "idle" on `agent_settled`. On a Pi without
//   `agent_settled`, `agent_end` with `ctx.isIdle()` still true after `settleGraceMs` counts as idle.
// - Each `parent/deliver` batch goes into the session with
//   `pi.sendMessage({customType, content: batch text, details}, {deliverAs: "followUp", triggerTurn: true})`
//   and is acknowledged once it has landed: its own `message_end` (role "custom", our customType,
//   details.deliveryId). Pi 1.6.0's sendMessage returns at once and reports failures later, and a
//   promise some surfaces return resolves only after the whole triggered run, so neither is the
//   signal. If sendMessage throws or rejects, or the message has not landed within
//   `deliveryTimeoutMs`, the daemon gets an error reply, keeps the batch, and sends it again with
//   the same deliveryId (the adapter re-reports idle after `redeliverDelayMs` to make that happen).
//   A batch id that already landed (even late) is acknowledged without being shown twice, and one
//   still queued in a busy Pi is not sent again.
// - A subagent manager reports and queries its children through the typed calls below.
// - On `session_shutdown` it closes the connection.
import type { ExtensionAPI, ExtensionContext } from "@earendil-works/pi-coding-agent";

import { HandoffClient, type CallOptions, type ClientEvent, type ReconnectOptions } from "./client.js";
import { autostartFromEnvironment, type AutostartOptions } from "./daemon-start.js";
import { HandoffError } from "./errors.js";
import { Landings } from "./landings.js";
import { methods } from "./methods.js";
import { integerFromEnv } from "./subagent-options.js";
import {
  ErrorCode,
  type ArtifactReadParams,
  type ArtifactReadResult,
  type Batch,
  type CancelResult,
  type CheckResult,
  type CompletedParams,
  type CompletedResult,
  type DeliverParams,
  type InitializeResult,
  type ParentState,
  type ResultStatus,
  type Section,
  type StartedResult,
  type UsageAnswer,
  type WaitParams,
  type WaitResult,
} from "./protocol.js";

/** The parts of Pi's ExtensionAPI the adapter uses. */
export type PiApi = Pick<ExtensionAPI, "on" | "sendMessage">;

/** The parts of Pi's ExtensionContext the adapter uses. */
export type PiContext = Pick<ExtensionContext, "getContextUsage" | "isIdle" | "hasUI"> & {
  sessionManager: Pick<ExtensionContext["sessionManager"], "getSessionId">;
  ui: Pick<ExtensionContext["ui"], "setStatus">;
};

export interface HandoffAdapterOptions {
  /** The parent's id at the daemon (default: Pi's session id, read at session_start). */
  parentId?: string;
  /** Default: defaultSocketPath() (socket-path.ts). */
  socketPath?: string;
  /** For the daemon's logs (default "pi-handoff"). */
  clientName?: string;
  /** `customType` of the messages delivered into the session (default "handoff"). */
  customType?: string;
  /** Deadline of a call, ms (default 30000; `wait` has its own). */
  requestTimeoutMs?: number;
  /** Reconnection backoff (default 100 ms doubling to 5 s). */
  reconnect?: ReconnectOptions;
  /** Pi without agent_settled: how long after agent_end the session must stay idle, ms (default 250). */
  settleGraceMs?: number;
  /** After a failed sendMessage, re-report idle after this, doubling to 60 s, ms (default 2000; 0: never). */
  redeliverDelayMs?: number;
  /**
   * How long a delivered message may take to land in the session (its message_end) before the
   * delivery is refused and resent, ms ($HANDOFF_DELIVERY_TIMEOUT_MS, default 30000).
   */
  deliveryTimeoutMs?: number;
  /** `ctx.ui.setStatus` key for connection trouble (default "handoff"; null: never touch the footer). */
  statusKey?: string | null;
  /** Called for every parent/deliver handled: shown, shown before (duplicate) or failed. */
  onDelivery?: (event: DeliveryEvent) => void;
  /** Connection events of the underlying client. */
  onEvent?: (event: ClientEvent) => void;
  /**
   * Start handoffd when nothing answers at the socket (default: autostartFromEnvironment(), off
   * with HANDOFF_AUTOSTART=0; false: never).
   */
  autostart?: AutostartOptions | false;
}

export interface DeliveryEvent {
  deliveryId: string;
  outcome: "delivered" | "duplicate" | "failed";
  sections: number;
  deferred: number;
  /** Why sendMessage failed ("failed" only). */
  error?: unknown;
}

/** What a subagent manager reports when a child finishes. */
export interface SubagentCompletion {
  childId: string;
  title?: string;
  status: ResultStatus;
  error?: string;
  /** The child's exact final answer. */
  finalText: string;
}

/** `details` of a delivered message: the batch without its texts (those are the message's content). */
export interface HandoffMessageDetails {
  deliveryId: string;
  deferred: number;
  budget: DeliverParams["budget"];
  sections: Omit<Section, "text">[];
}

/** The calls a subagent manager makes; the parent id is filled in. */
export interface HandoffAdapter {
  /** Known once the session started. */
  readonly parentId: string | undefined;
  /** The underlying client, once the session started. */
  readonly client: HandoffClient | undefined;
  /** Resolves when connected to handoffd. */
  ready(timeoutMs?: number): Promise<InitializeResult>;
  /** True while connected to handoffd. */
  readonly connected: boolean;
  /** Calls `listener` after every (re)connection to handoffd, before queued calls go out; returns the unsubscribe. */
  onConnected(listener: () => void): () => void;
  /**
   * Why handoffd cannot be had now (a connection attempt failed, or the client could not start,
   * and none connected since); undefined while connected or still trying for the first time.
   */
  readonly unreachableReason: string | undefined;
  /** True while the session is idle (reported "idle" to handoffd). */
  readonly idle: boolean;
  /** Calls `listener` whenever the session goes idle; returns the unsubscribe. */
  onIdle(listener: () => void): () => void;
  /**
   * Puts a batch bounded without handoffd (local-bound.ts) into the session as a delivery would:
   * resolves once it landed (its message_end), rejects if Pi refused it or it did not land in time.
   */
  deliverLocal(batch: Batch): Promise<void>;
  started(childId: string, title?: string, options?: CallOptions): Promise<StartedResult>;
  /** Fire-and-forget; false when not sent (not connected). */
  progress(childId: string, text: string): boolean;
  completed(completion: SubagentCompletion, options?: CallOptions): Promise<CompletedResult>;
  /**
   * Waits for the children and returns their projected batch; passes the session's usage along.
   * Like check and cancel, fails at once when handoffd is known to be unreachable (see CONNECT_GRACE_MS).
   */
  wait(childIds: string[], options?: { timeoutMs?: number; signal?: AbortSignal }): Promise<WaitResult>;
  check(childId: string, options?: CallOptions): Promise<CheckResult>;
  cancel(childIds: string[], options?: CallOptions): Promise<CancelResult>;
  artifactRead(params: ArtifactReadParams, options?: CallOptions): Promise<ArtifactReadResult>;
  /**
   * Runs `hook` on session_shutdown before the connection closes, whatever order the extensions'
   * handlers run in (say, telling handoffd the session's children are cancelled); awaited.
   */
  beforeClose(hook: () => Promise<void>): void;
  /** Closes the connection for good (also done on session_shutdown, after the beforeClose hooks). */
  dispose(): void;
}

/**
 * How long check, wait and cancel wait for a connection that was lost and is being re-established,
 * ms. When a reconnection attempt has already failed (handoffd is known to be down), they fail at
 * once instead.
 */
export const CONNECT_GRACE_MS = 2_000;

/** Default of `deliveryTimeoutMs`. */
export const DEFAULT_DELIVERY_TIMEOUT_MS = 30_000;
const MAX_REDELIVER_DELAY_MS = 60_000;

class PiHandoffAdapter implements HandoffAdapter {
  private handoff: HandoffClient | undefined;
  private id: string | undefined;
  private ctx: PiContext | undefined;
  private startError: HandoffError | undefined;
  private disposed = false;
  private lateWaits = 0;  // late answers of cancelled waits shown so far (their delivery ids)
  private sawSettled = false;
  private runs = 0;
  private state: ParentState | undefined;
  private fallbackTimer: NodeJS.Timeout | undefined;
  private redeliverTimer: NodeJS.Timeout | undefined;
  private redeliverDelayMs: number;
  /** Deliveries handed to Pi and the ones that landed in the session. */
  private readonly landings = new Landings();
  /** Deliveries being shown right now, so a resend waits for the first attempt. */
  private readonly showing = new Map<string, Promise<void>>();
  private readonly deliveryTimeoutMs: number;
  /** The last connection attempt's failure while not connected; undefined once connected. */
  private downBecause: HandoffError | undefined;
  private readonly connectedListeners = new Set<() => void>();
  private readonly idleListeners = new Set<() => void>();
  private localDeliveries = 0;
  private readonly closeHooks = new Set<() => Promise<void>>();
  /** The connection status last shown, so it is set only when it changes. */
  private shownStatus: string | undefined;

  constructor(
    private readonly pi: PiApi,
    private readonly options: HandoffAdapterOptions,
  ) {
    this.redeliverDelayMs = options.redeliverDelayMs ?? 2_000;
    this.deliveryTimeoutMs =
      options.deliveryTimeoutMs ?? integerFromEnv(process.env, "HANDOFF_DELIVERY_TIMEOUT_MS", DEFAULT_DELIVERY_TIMEOUT_MS, 1, 3_600_000);
    pi.on("message_end", (event) => this.onMessageEnd(event.message));
    pi.on("session_start", (_event, ctx) => this.begin(ctx));
    pi.on("agent_start", (_event, ctx) => {
      this.ctx = ctx;
      this.runs += 1;
      this.report("busy");
    });
    pi.on("agent_settled", (_event, ctx) => {
      this.ctx = ctx;
      this.sawSettled = true;
      this.report("idle");
    });
    pi.on("agent_end", (_event, ctx) => {
      this.ctx = ctx;
      if (!this.sawSettled) this.idleAfterGrace();
    });
    pi.on("session_shutdown", async () => {
      await Promise.all([...this.closeHooks].map((hook) => hook().catch(() => undefined)));
      this.dispose();
    });
  }

  get parentId(): string | undefined {
    return this.id;
  }

  get client(): HandoffClient | undefined {
    return this.handoff;
  }

  async ready(timeoutMs?: number): Promise<InitializeResult> {
    return this.need("ready").client.ready(timeoutMs);
  }

  get connected(): boolean {
    return this.handoff?.connected === true;
  }

  beforeClose(hook: () => Promise<void>): void {
    this.closeHooks.add(hook);
  }

  onConnected(listener: () => void): () => void {
    this.connectedListeners.add(listener);
    return () => this.connectedListeners.delete(listener);
  }

  get unreachableReason(): string | undefined {
    if (this.connected) return undefined;
    return (this.downBecause ?? this.startError)?.message;
  }

  get idle(): boolean {
    return this.state === "idle";
  }

  onIdle(listener: () => void): () => void {
    this.idleListeners.add(listener);
    return () => this.idleListeners.delete(listener);
  }

  async deliverLocal(batch: Batch): Promise<void> {
    if (this.disposed) throw new HandoffError("closed", "the handoff adapter was disposed");
    await this.show({ parentId: this.id ?? "", deliveryId: `local-${String(++this.localDeliveries)}-${String(Date.now())}`, ...batch });
  }

  async started(childId: string, title?: string, options?: CallOptions): Promise<StartedResult> {
    const { client, parentId } = this.need(methods.subagentStarted.name);
    return client.started(title === undefined ? { parentId, childId } : { parentId, childId, title }, options);
  }

  progress(childId: string, text: string): boolean {
    if (this.handoff === undefined || this.id === undefined) return false;
    return this.handoff.progress({ parentId: this.id, childId, text });
  }

  async completed(completion: SubagentCompletion, options?: CallOptions): Promise<CompletedResult> {
    const { client, parentId } = this.need(methods.subagentCompleted.name);
    const params: CompletedParams = { parentId, ...completion };
    return client.completed(params, options);
  }

  async wait(childIds: string[], options: { timeoutMs?: number; signal?: AbortSignal } = {}): Promise<WaitResult> {
    const { client, parentId } = this.need(methods.subagentWait.name);
    await this.reachable(methods.subagentWait.name, client, options.signal);
    const params: WaitParams = { parentId, childIds };
    if (options.timeoutMs !== undefined) params.timeoutMs = options.timeoutMs;
    const usage = this.usageOrNull();
    if (usage !== null) params.usage = usage;
    if (options.signal === undefined) return client.wait(params);
    // Given up (Esc) just after handoffd answered: the answer's results were consumed, so they
    // reach the session as a batch of their own, like an auto-delivery.
    return client.wait(params, { signal: options.signal, onLateResult: (result) => this.deliverLate(parentId, result) });
  }

  async check(childId: string, options?: CallOptions): Promise<CheckResult> {
    const { client, parentId } = this.need(methods.subagentCheck.name);
    await this.reachable(methods.subagentCheck.name, client, options?.signal);
    return client.check({ parentId, childId }, options);
  }

  async cancel(childIds: string[], options?: CallOptions): Promise<CancelResult> {
    const { client, parentId } = this.need(methods.subagentCancel.name);
    await this.reachable(methods.subagentCancel.name, client, options?.signal);
    return client.cancel({ parentId, childIds }, options);
  }

  async artifactRead(params: ArtifactReadParams, options?: CallOptions): Promise<ArtifactReadResult> {
    return this.need(methods.artifactRead.name).client.artifactRead(params, options);
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    clearTimeout(this.fallbackTimer);
    clearTimeout(this.redeliverTimer);
    this.handoff?.close();
  }

  // ---- Pi events ----------------------------------------------------------------------------

  private autostartOption(): { autostart?: AutostartOptions } {
    if (this.options.autostart === false) return {};
    const autostart = this.options.autostart ?? autostartFromEnvironment();
    return autostart === undefined ? {} : { autostart };
  }

  private begin(ctx: PiContext): void {
    this.ctx = ctx;
    if (this.disposed || this.handoff !== undefined) return;
    try {
      const parentId = this.options.parentId ?? ctx.sessionManager.getSessionId();
      const client = new HandoffClient({
        parentId,
        clientName: this.options.clientName ?? "pi-handoff",
        ...(this.options.socketPath === undefined ? {} : { socketPath: this.options.socketPath }),
        ...(this.options.requestTimeoutMs === undefined ? {} : { requestTimeoutMs: this.options.requestTimeoutMs }),
        ...(this.options.reconnect === undefined ? {} : { reconnect: this.options.reconnect }),
        ...this.autostartOption(),
        onUsage: () => this.usageOrNull(),
        onDeliver: (params) => this.deliver(params),
        onEvent: (event) => this.onClientEvent(event),
      });
      this.id = parentId;
      this.handoff = client;
      // Remembered by the client and sent as soon as (and whenever) it connects.
      this.report(ctx.isIdle() ? "idle" : "busy");
      client.start();
    } catch (error) {
      this.startError =
        error instanceof HandoffError ? error : new HandoffError("not-connected", `handoff did not start: ${String(error)}`, { cause: error });
      this.setStatus(`handoff: ${this.startError.message}`);
    }
  }

  /** Pi without agent_settled: idle once agent_end is followed by `settleGraceMs` of idleness. */
  private idleAfterGrace(): void {
    clearTimeout(this.fallbackTimer);
    const runs = this.runs;
    this.fallbackTimer = setTimeout(() => {
      if (this.sawSettled || this.runs !== runs || this.disposed) return;
      if (this.ctx?.isIdle() === true) this.report("idle");
    }, this.options.settleGraceMs ?? 250);
  }

  private report(state: ParentState): void {
    this.state = state;
    if (state === "busy") {
      clearTimeout(this.fallbackTimer);
      clearTimeout(this.redeliverTimer);
    }
    if (this.handoff !== undefined && this.id !== undefined) this.handoff.parentState({ parentId: this.id, state });
    if (state === "idle") {
      for (const listener of this.idleListeners) {
        try {
          listener();
        } catch {
          // A listener's failure is its own.
        }
      }
    }
  }

  private onClientEvent(event: ClientEvent): void {
    if (event.type === "connected") {
      this.downBecause = undefined;
      this.setStatus(undefined);
      for (const listener of this.connectedListeners) {
        try {
          listener();
        } catch {
          // A listener's failure is its own.
        }
      }
    } else if (event.type === "connect-failed" || event.type === "disconnected") {
      if (event.type === "connect-failed") this.downBecause = event.error;
      this.setStatus("handoff: daemon unreachable, retrying");
    }
    this.options.onEvent?.(event);
  }

  /**
   * Connected, or connected again within CONNECT_GRACE_MS after a loss; throws "not-connected" at
   * once when a connection attempt already failed, and "aborted" on `signal`.
   */
  private async reachable(method: string, client: HandoffClient, signal: AbortSignal | undefined): Promise<void> {
    if (client.connected) return;
    if (this.downBecause !== undefined)
      throw new HandoffError("not-connected", `${method}: handoffd is unreachable (${this.downBecause.message}); reconnecting in the background`, { method });
    await client.ready(CONNECT_GRACE_MS, signal);
  }

  private setStatus(text: string | undefined): void {
    const key = this.options.statusKey === undefined ? "handoff" : this.options.statusKey;
    if (key === null || this.ctx?.hasUI !== true || text === this.shownStatus) return;
    this.shownStatus = text;
    try {
      this.ctx.ui.setStatus(key, text);
    } catch {
      // A stale context after session replacement; the status is cosmetic.
    }
  }

  // ---- daemon requests ----------------------------------------------------------------------

  /** `context/usage`: Pi's answer as it is; undefined (no model, no window) becomes null. */
  private usageOrNull(): UsageAnswer {
    const usage = this.ctx?.getContextUsage();
    if (usage === undefined) return null;
    return { tokens: usage.tokens, contextWindow: usage.contextWindow, percent: usage.percent };
  }

  /** A cancelled wait's answer that was already on its way: shown as a batch of its own. */
  private deliverLate(parentId: string, result: WaitResult): void {
    if (result.sections.length === 0 || this.disposed) return;
    const params: DeliverParams = {
      parentId,
      deliveryId: `late-wait-${String(++this.lateWaits)}-${String(Date.now())}`,
      text: result.text,
      sections: result.sections,
      deferred: result.deferred,
      budget: result.budget,
    };
    this.show(params).then(
      () => this.onDelivery(params, "delivered"),
      (error: unknown) => this.onDelivery(params, "failed", error),
    );
  }

  /** `parent/deliver`: resolves (acknowledges) only once the batch is in the session. */
  private async deliver(params: DeliverParams): Promise<void> {
    if (params.parentId !== this.id)
      throw new HandoffError("rpc", `delivery for parent '${params.parentId}' reached '${String(this.id)}'`, {
        code: ErrorCode.InvalidParams,
      });
    const id = params.deliveryId;
    const earlier = this.showing.get(id);
    if (this.landings.hasLanded(id) || earlier !== undefined) {
      await earlier;  // a resend while the first attempt is still running: share its outcome
      this.onDelivery(params, "duplicate");
      return;
    }
    // Still queued in Pi from an earlier attempt: wait for it again rather than send it twice.
    const attempt = this.landings.isInFlight(id) ? this.landings.wait(id, this.deliveryTimeoutMs) : this.show(params);
    this.showing.set(id, attempt);
    try {
      await attempt;
    } catch (error) {
      this.onDelivery(params, "failed", error);
      this.retryLater();
      throw new HandoffError("rpc", `Pi did not take delivery ${id}: ${error instanceof Error ? error.message : String(error)}`, {
        code: ErrorCode.InternalError,
      });
    } finally {
      this.showing.delete(id);
    }
    this.redeliverDelayMs = this.options.redeliverDelayMs ?? 2_000;
    this.onDelivery(params, "delivered");
  }

  private async show(params: DeliverParams): Promise<void> {
    const id = params.deliveryId;
    const details: HandoffMessageDetails = {
      deliveryId: id,
      deferred: params.deferred,
      budget: params.budget,
      sections: params.sections.map(({ text: _text, ...rest }) => rest),
    };
    let failed: ((error: unknown) => void) | undefined;
    const refused = new Promise<never>((_resolve, reject) => {
      failed = reject;
    });
    refused.catch(() => undefined);
    this.landings.sent(id);
    try {
      // Typed void in Pi's ExtensionAPI; a promise some surfaces return resolves only after the
      // whole triggered run: only its rejection matters here.
      const returned: unknown = this.pi.sendMessage(
        { customType: this.customType, content: params.text, display: true, details },
        { deliverAs: "followUp", triggerTurn: true },
      );
      if (isThenable(returned)) returned.then(undefined, (error: unknown) => failed?.(error));
    } catch (error) {
      this.landings.forget(id);
      throw error;
    }
    await Promise.race([this.landings.wait(id, this.deliveryTimeoutMs), refused]).catch((error: unknown) => {
      // Refused, or not landed in time. A message queued in a busy Pi may still land: keep
      // watching for it then (a resend is not sent again); an idle Pi has nothing queued.
      if (this.ctx?.isIdle() !== false) this.landings.forget(id);
      throw error;
    });
  }

  /** Pi's message_end: one of our deliveries has landed in the session. */
  private onMessageEnd(message: unknown): void {
    const custom = message as { role?: string; customType?: string; details?: { deliveryId?: unknown } } | undefined;
    if (custom?.role !== "custom" || custom.customType !== this.customType) return;
    const id = custom.details?.deliveryId;
    if (typeof id !== "string") return;
    this.landings.landed(id);
  }

  private get customType(): string {
    return this.options.customType ?? "handoff";
  }

  /** After a refused delivery, report idle again later (while still idle) so the daemon resends it. */
  private retryLater(): void {
    const delay = this.redeliverDelayMs;
    if (delay <= 0 || this.disposed) return;
    this.redeliverDelayMs = Math.min(delay * 2, MAX_REDELIVER_DELAY_MS);
    clearTimeout(this.redeliverTimer);
    this.redeliverTimer = setTimeout(() => {
      if (!this.disposed && this.state === "idle") this.report("idle");
    }, delay);
  }

  private onDelivery(params: DeliverParams, outcome: DeliveryEvent["outcome"], error?: unknown): void {
    const event: DeliveryEvent = { deliveryId: params.deliveryId, outcome, sections: params.sections.length, deferred: params.deferred };
    if (error !== undefined) event.error = error;
    this.options.onDelivery?.(event);
  }

  private need(method: string): { client: HandoffClient; parentId: string } {
    if (this.disposed) throw new HandoffError("closed", `${method}: the handoff adapter was disposed`, { method });
    if (this.startError !== undefined) throw this.startError;
    if (this.handoff === undefined || this.id === undefined)
      throw new HandoffError("not-connected", `${method}: the Pi session has not started yet`, { method });
    return { client: this.handoff, parentId: this.id };
  }
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    (typeof value === "object" || typeof value === "function") &&
    value !== null &&
    typeof (value as { then?: unknown }).then === "function"
  );
}

/**
 * The adapter, for a subagent extension that reports its children (or for tests). The package's
 * own Pi extension (extension.ts) builds its subagent tools on it.
 */
export function createHandoffAdapter(pi: PiApi, options: HandoffAdapterOptions = {}): HandoffAdapter {
  return new PiHandoffAdapter(pi, options);
}
