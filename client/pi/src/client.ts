// A typed handoffd client over its Unix socket: every client -> daemon method of
// docs/protocol.md §6, the daemon -> client requests (context/usage, parent/deliver) answered by
// callbacks, and reconnection when the daemon restarts.
//
// Connection contract:
// - `connect()` makes one attempt and rejects ("not-connected") when the daemon is not there;
//   `start()` keeps trying in the background. Either way, once connected, a lost connection is
//   re-established with backoff (initialDelayMs doubling to maxDelayMs), `initialize` is sent
//   again with the same parentId (re-registering the parent's endpoint), and the last parent
//   state this client reported is sent again.
// - Requests in flight when the connection drops fail with kind "connection-lost"; the caller
//   may resend them (the daemon treats a repeated completion as a duplicate). Requests made
//   while reconnecting wait for the connection, at most their timeout ("not-connected").
// - Notifications (progress, parent/state) are fire-and-forget; they return false when nothing
//   was sent. A parent state is still remembered and sent on the next connection.
import { createConnection, type Socket } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";

import { type AutostartOptions, nothingListens, startAndConnect } from "./daemon-start.js";
import { HandoffError } from "./errors.js";
import { DEFAULT_MAX_FRAME_BYTES } from "./framing.js";
import { methods, type RequestType } from "./methods.js";
import { JsonRpcPeer } from "./peer.js";
import {
  ErrorCode,
  PROTOCOL_VERSION,
  type ArtifactReadParams,
  type ArtifactReadResult,
  type CancelParams,
  type CancelResult,
  type CheckParams,
  type CheckResult,
  type CompletedParams,
  type CompletedResult,
  type DeliverParams,
  type InitializeParams,
  type InitializeResult,
  type ParentState,
  type ParentStateParams,
  type ProgressParams,
  type StartedParams,
  type StartedResult,
  type StatusResult,
  type UsageAnswer,
  type UsageRequestParams,
  type WaitParams,
  type WaitResult,
} from "./protocol.js";
import { defaultSocketPath } from "./socket-path.js";
import { isObject, WireError } from "./wire.js";

export interface ReconnectOptions {
  /** First delay before reconnecting, ms (default 100). */
  initialDelayMs?: number;
  /** The delay doubles up to this, ms (default 5000). */
  maxDelayMs?: number;
}

/** What happened to the connection; for status displays and logs. */
export type ClientEvent =
  | { type: "connected"; info: InitializeResult; reconnected: boolean }
  | { type: "disconnected"; error: Error | undefined }
  | { type: "connect-failed"; error: HandoffError; retryInMs: number | null }
  | { type: "protocol-error"; description: string };

export interface HandoffClientOptions {
  /** Default: defaultSocketPath() ($HANDOFF_SOCKET, $XDG_RUNTIME_DIR/handoff/handoffd.sock, else ${TMPDIR:-/tmp}/handoff-<uid>/handoffd.sock). */
  socketPath?: string;
  /** For the daemon's logs (default "handoff-ts"). */
  clientName?: string;
  /** Register this connection as the parent's endpoint: it receives context/usage and parent/deliver. */
  parentId?: string;
  /** Deadline of a call, including waiting for a connection, ms (default 30000). */
  requestTimeoutMs?: number;
  /** Reconnect after losing an established connection (default true, 100 ms doubling to 5 s). */
  reconnect?: boolean | ReconnectOptions;
  /** The largest incoming frame buffered; a bigger one drops the connection (default 64 MiB). */
  maxFrameBytes?: number;
  /** Answers `context/usage` (default: null, "unknown"). May throw: the daemon then uses static caps. */
  onUsage?: (params: UsageRequestParams) => UsageAnswer | Promise<UsageAnswer>;
  /**
   * Takes one `parent/deliver` batch. Resolving acknowledges it (the daemon drops the results);
   * throwing replies with an error, and the daemon keeps the batch and sends it again later with
   * the same deliveryId. Without it, deliveries are refused (never silently acknowledged).
   */
  onDeliver?: (params: DeliverParams) => void | Promise<void>;
  /** Connection events (also see addListener). */
  onEvent?: (event: ClientEvent) => void;
  /** Start handoffd when nothing answers at the socket (src/daemon-start.ts; default: never). */
  autostart?: AutostartOptions;
}

export interface CallOptions {
  /** Overrides the call's deadline, ms; Infinity waits as long as the connection lives. */
  timeoutMs?: number;
  signal?: AbortSignal;
}

/** Extra time a wait's reply may take past its own timeoutMs before the client gives up, ms. */
export const WAIT_GRACE_MS = 15_000;

/** After a wait is given up, how long its connection stays open for the daemon's last word, ms. */
export const CANCELLED_WAIT_GRACE_MS = 5_000;

export interface WaitOptions extends CallOptions {
  /**
   * With `signal`: when the wait is given up, the daemon is asked to cancel it ($/cancelRequest)
   * and the connection stays open (at most CANCELLED_WAIT_GRACE_MS) for its last word. If that is
   * an answer written before the cancel arrived, its results were consumed: they are handed to
   * this (the caller must show them), after `wait` itself has rejected with "aborted".
   */
  onLateResult?: (result: WaitResult) => void;
}

/** An installed, initialized connection. */
interface Live {
  peer: JsonRpcPeer;
  info: InitializeResult;
}

interface ConnectionWaiter {
  resolve: (live: Live) => void;
  reject: (error: HandoffError) => void;
}

export class HandoffClient {
  readonly socketPath: string;
  readonly parentId: string | undefined;
  private readonly clientName: string;
  private readonly requestTimeoutMs: number;
  private readonly reconnect: Required<ReconnectOptions> | null;
  private readonly maxFrameBytes: number;
  private readonly listeners = new Set<(event: ClientEvent) => void>();
  private readonly waiters = new Set<ConnectionWaiter>();
  private readonly sideConnections = new Set<JsonRpcPeer>();
  private readonly stopSleeping = new AbortController();

  private live: Live | undefined;
  private connecting: Promise<Live> | undefined;
  private lastInfo: InitializeResult | undefined;
  private everConnected = false;
  private connectedAt = 0;
  private running = false;  // losses and failures lead to new attempts
  private looping = false;
  private ownerClosed = false;
  private delayMs: number;
  private lastConnectError: HandoffError | undefined;
  private lastState: ParentState | undefined;

  constructor(private readonly options: HandoffClientOptions = {}) {
    this.socketPath = options.socketPath ?? defaultSocketPath();
    this.parentId = options.parentId;
    this.clientName = options.clientName ?? "handoff-ts";
    this.requestTimeoutMs = options.requestTimeoutMs ?? 30_000;
    const reconnect = options.reconnect ?? true;
    this.reconnect =
      reconnect === false
        ? null
        : {
            initialDelayMs: (reconnect === true ? undefined : reconnect.initialDelayMs) ?? 100,
            maxDelayMs: (reconnect === true ? undefined : reconnect.maxDelayMs) ?? 5_000,
          };
    this.delayMs = this.reconnect?.initialDelayMs ?? 0;
    this.maxFrameBytes = options.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES;
    if (options.onEvent) this.listeners.add(options.onEvent);
  }

  /** True while a connection is up and initialized. */
  get connected(): boolean {
    return this.live !== undefined;
  }

  /** The daemon's `initialize` answer on the current (or last) connection. */
  get serverInfo(): InitializeResult | undefined {
    return this.lastInfo;
  }

  /** Subscribes to connection events; returns the unsubscribe function. */
  addListener(listener: (event: ClientEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Connects and runs `initialize` (registering `parentId` when given). Rejects with
   * "not-connected" when the daemon is unreachable; no retries until a first success (use
   * start() for that). Resolves at once when already connected.
   */
  async connect(): Promise<InitializeResult> {
    if (this.ownerClosed) throw this.closedError("connect");
    if (this.live) return this.live.info;
    if (this.running) return (await this.whenConnected("connect", this.requestTimeoutMs, undefined)).info;
    const { info } = await this.attempt();
    this.running = true;
    return info;
  }

  /** Connects in the background, retrying with backoff until closed; never throws for a daemon that is absent. */
  start(): void {
    if (this.ownerClosed) throw this.closedError("start");
    if (this.running) return;
    this.running = true;
    void this.loop(false);
  }

  /** Resolves once connected (at most `timeoutMs`); rejects "not-connected", "closed" or, on `signal`, "aborted". */
  async ready(timeoutMs = this.requestTimeoutMs, signal?: AbortSignal): Promise<InitializeResult> {
    return (await this.whenConnected("ready", timeoutMs, signal)).info;
  }

  /** Closes the connection for good; pending calls fail with kind "closed". */
  close(): void {
    if (this.ownerClosed) return;
    this.ownerClosed = true;
    this.running = false;
    this.stopSleeping.abort();
    for (const waiter of this.waiters) waiter.reject(this.closedError("connect"));
    this.waiters.clear();
    for (const side of this.sideConnections) side.close("closed");
    this.sideConnections.clear();
    const live = this.live;
    this.live = undefined;
    live?.peer.close("closed");
  }

  // ---- typed methods ------------------------------------------------------------------------

  /** `subagent/started`: a child is running, so wait and check know it. */
  async started(params: StartedParams, options?: CallOptions): Promise<StartedResult> {
    return this.request(methods.subagentStarted, params, options);
  }

  /** `subagent/progress` (notification): recent activity for check previews. False when not sent. */
  progress(params: ProgressParams): boolean {
    return this.live?.peer.notify(methods.subagentProgress.name, params) ?? false;
  }

  /** `subagent/completed`: durable once this resolves; resending the same completion is harmless. */
  async completed(params: CompletedParams, options?: CallOptions): Promise<CompletedResult> {
    return this.request(methods.subagentCompleted, params, options);
  }

  /** `subagent/check`: state and a bounded preview. */
  async check(params: CheckParams, options?: CallOptions): Promise<CheckResult> {
    return this.request(methods.subagentCheck, params, options);
  }

  /**
   * `subagent/wait`: the listed children's results as one projected batch; they are consumed.
   * Runs on a connection of its own, so that giving up (options.signal, or the deadline:
   * params.timeoutMs + WAIT_GRACE_MS, or none) closes that connection before the daemon can
   * answer, and the daemon keeps the results pending instead of consuming them into a reply
   * nobody reads. With options.onLateResult, giving up on the signal cancels the wait first
   * and an answer the daemon had already written reaches onLateResult (see WaitOptions).
   */
  async wait(params: WaitParams, options: WaitOptions = {}): Promise<WaitResult> {
    const timeoutMs = options.timeoutMs ?? (params.timeoutMs === undefined ? Infinity : params.timeoutMs + WAIT_GRACE_MS);
    const method = methods.subagentWait;
    await this.whenConnected(method.name, this.requestTimeoutMs, options.signal);
    const side = await this.openSideConnection(method.name);
    let lingering = false;
    const done = (): void => {
      side.close("closed", "the wait ended");
      this.sideConnections.delete(side);
    };
    const onLateResult = options.onLateResult;
    const onLateReply =
      onLateResult === undefined
        ? undefined
        : (reply: { result: unknown } | { error: HandoffError }): void => {
            clearTimeout(grace);
            done();
            if (!("result" in reply)) return;  // -32800 (nothing taken), or the connection ended
            try {
              onLateResult(checked(method, reply.result));
            } catch (error) {
              this.emit({ type: "protocol-error", description: `a cancelled wait's late answer could not be taken: ${String(error)}` });
            }
          };
    let grace: NodeJS.Timeout | undefined;
    const sent = options.signal?.aborted !== true;  // else the peer refuses it unsent: no last word to wait for
    try {
      const result = await side.request(method.name, params, { timeoutMs, signal: options.signal, onLateReply });
      return checked(method, result);
    } catch (error) {
      if (sent && onLateReply !== undefined && error instanceof HandoffError && error.kind === "aborted" && !side.closed) {
        lingering = true;  // onLateReply closes it, or the grace runs out
        grace = setTimeout(done, CANCELLED_WAIT_GRACE_MS);
        grace.unref?.();
      }
      throw error;
    } finally {
      if (!lingering) done();
    }
  }

  /** `subagent/cancel`: drop interest in children; their completed results are consumed. */
  async cancel(params: CancelParams, options?: CallOptions): Promise<CancelResult> {
    return this.request(methods.subagentCancel, params, options);
  }

  /**
   * `parent/state` (notification): "idle" lets the daemon auto-deliver. The state of this
   * client's own parent is remembered and sent again after a reconnect. False when not sent now.
   */
  parentState(params: ParentStateParams): boolean {
    if (params.parentId === this.parentId) this.lastState = params.state;
    return this.live?.peer.notify(methods.parentState.name, params) ?? false;
  }

  /** `artifact/read`: a page of an artifact, like Pi's `read` with offset/limit. */
  async artifactRead(params: ArtifactReadParams, options?: CallOptions): Promise<ArtifactReadResult> {
    return this.request(methods.artifactRead, params, options);
  }

  /** `daemon/status`: counts, queue depth, uptime. */
  async status(options?: CallOptions): Promise<StatusResult> {
    return this.request(methods.daemonStatus, undefined, options);
  }

  /**
   * Any method of methods.ts (`params` undefined: none): the result is checked against the
   * method's shape (members it does not name are kept) and rejects with kind "protocol" when it
   * does not fit.
   */
  async request<P, R>(method: RequestType<P, R>, params: P | undefined, options?: CallOptions): Promise<R> {
    return checked(method, await this.call(method.name, params, options));
  }

  /** Any method, untyped (`params` undefined: none): waits for a connection, then sends the request. */
  async call(method: string, params: unknown, options: CallOptions = {}): Promise<unknown> {
    const deadline = Date.now() + (options.timeoutMs ?? this.requestTimeoutMs);
    const { peer } = await this.whenConnected(method, deadline - Date.now(), options.signal);
    return peer.request(method, params, { timeoutMs: Math.max(0, deadline - Date.now()), signal: options.signal });
  }

  // ---- connection management ----------------------------------------------------------------

  private emit(event: ClientEvent): void {
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch {
        // A listener's failure is its own; the connection goes on.
      }
    }
  }

  private closedError(method: string): HandoffError {
    return new HandoffError("closed", `${method}: the handoff client was closed`, { method });
  }

  /** One connection attempt at a time; concurrent callers share it. */
  private attempt(): Promise<Live> {
    this.connecting ??= this.attemptOnce().finally(() => {
      this.connecting = undefined;
    });
    return this.connecting;
  }

  /** Opens a socket, runs initialize, installs the connection. Rejects "not-connected" (or the daemon's error). */
  private async attemptOnce(): Promise<Live> {
    const live = await this.open("main");
    const { peer, info } = live;
    if (this.ownerClosed) {
      peer.close("closed");
      throw this.closedError("connect");
    }
    this.live = live;
    this.lastInfo = info;
    this.connectedAt = Date.now();
    this.lastConnectError = undefined;
    const reconnected = this.everConnected;
    this.everConnected = true;
    if (this.parentId !== undefined && this.lastState !== undefined)
      peer.notify(methods.parentState.name, { parentId: this.parentId, state: this.lastState } satisfies ParentStateParams);
    this.emit({ type: "connected", info, reconnected });
    for (const waiter of this.waiters) waiter.resolve(live);
    this.waiters.clear();
    return live;
  }

  /**
   * A new initialized connection: the main one (registering parentId, answering the daemon's
   * requests, reconnected when lost) or a side one (a plain client for one call).
   */
  private async open(role: "main" | "side"): Promise<Live> {
    const socket = await this.openSocket();
    const main = role === "main";
    const peer: JsonRpcPeer = new JsonRpcPeer(socket, {
      maxFrameBytes: this.maxFrameBytes,
      onRequest: (method, params) => this.onRequest(method, params),
      onProtocolError: (description) => this.emit({ type: "protocol-error", description }),
      onClose: (error) => {
        if (main) this.onLost(peer, error);
      },
    });
    const params: InitializeParams = { protocolVersion: PROTOCOL_VERSION, clientName: this.clientName };
    if (main && this.parentId !== undefined) params.parentId = this.parentId;
    try {
      const info = checked(methods.initialize, await peer.request(methods.initialize.name, params, { timeoutMs: this.requestTimeoutMs }));
      return { peer, info };
    } catch (error) {
      peer.close("closed", "initialize failed");
      throw error instanceof HandoffError && error.kind === "rpc"
        ? error
        : new HandoffError("not-connected", `handoffd at ${this.socketPath} did not complete initialize: ${error instanceof Error ? error.message : String(error)}`, {
            method: methods.initialize.name,
            cause: error,
          });
    }
  }

  private async openSocket(): Promise<Socket> {
    const autostart = this.options.autostart;
    try {
      try {
        return await this.connectSocket();
      } catch (error) {
        if (autostart === undefined || !nothingListens(error)) throw error;
        return await startAndConnect(this.socketPath, autostart, () => this.connectSocket());
      }
    } catch (error) {
      const why = (error as NodeJS.ErrnoException).code ?? (error instanceof Error ? error.message : String(error));
      throw new HandoffError("not-connected", `cannot reach handoffd at ${this.socketPath}: ${why}`, {
        method: methods.initialize.name,
        cause: error,
      });
    }
  }

  /** One connect(); rejects with the socket's own error (ENOENT, ECONNREFUSED...). */
  private connectSocket(): Promise<Socket> {
    return new Promise<Socket>((resolve, reject) => {
      const socket = createConnection({ path: this.socketPath });
      const onError = (error: NodeJS.ErrnoException): void => {
        socket.destroy();
        reject(error);
      };
      socket.once("error", onError);
      socket.once("connect", () => {
        socket.off("error", onError);
        resolve(socket);
      });
    });
  }

  private async openSideConnection(method: string): Promise<JsonRpcPeer> {
    if (this.ownerClosed) throw this.closedError(method);
    const { peer: side } = await this.open("side");
    if (this.ownerClosed) {
      side.close("closed");
      throw this.closedError(method);
    }
    this.sideConnections.add(side);
    return side;
  }

  private onLost(peer: JsonRpcPeer, error: Error | undefined): void {
    if (this.live?.peer !== peer) return;  // a connection that never got installed, or an old one
    this.live = undefined;
    this.emit({ type: "disconnected", error });
    if (this.ownerClosed || !this.running) return;
    if (this.reconnect === null) {
      this.running = false;
      const lost = new HandoffError("not-connected", `connection to handoffd at ${this.socketPath} lost; reconnecting is off`);
      for (const waiter of this.waiters) waiter.reject(lost);
      this.waiters.clear();
      return;
    }
    // A connection that stayed up a while resets the backoff; one that drops at once does not.
    if (Date.now() - this.connectedAt >= this.reconnect.maxDelayMs) this.delayMs = this.reconnect.initialDelayMs;
    void this.loop(true);
  }

  /** Attempts until connected or closed, sleeping with backoff between failures (and first, after a loss). */
  private async loop(sleepFirst: boolean): Promise<void> {
    if (this.looping) return;
    this.looping = true;
    try {
      let sleepNow = sleepFirst;
      while (this.running && !this.ownerClosed && this.live === undefined) {
        if (sleepNow) {
          try {
            await sleep(this.delayMs, undefined, { signal: this.stopSleeping.signal });
          } catch {
            return;  // closed
          }
          if (this.reconnect) this.delayMs = Math.min(this.delayMs * 2, this.reconnect.maxDelayMs);
        }
        try {
          await this.attempt();
          return;
        } catch (error) {
          const failure =
            error instanceof HandoffError ? error : new HandoffError("not-connected", String(error), { cause: error });
          this.lastConnectError = failure;
          this.emit({ type: "connect-failed", error: failure, retryInMs: this.reconnect ? this.delayMs : null });
          if (this.reconnect === null) {
            this.running = false;
            for (const waiter of this.waiters) waiter.reject(failure);
            this.waiters.clear();
            return;
          }
          sleepNow = true;
        }
      }
    } finally {
      this.looping = false;
    }
  }

  /** The live connection, waiting for one while (re)connecting, at most `timeoutMs`. */
  private whenConnected(method: string, timeoutMs: number, signal: AbortSignal | undefined): Promise<Live> {
    if (this.ownerClosed) return Promise.reject(this.closedError(method));
    if (this.live) return Promise.resolve(this.live);
    if (!this.running) {
      return Promise.reject(
        new HandoffError("not-connected", `${method}: not connected to handoffd at ${this.socketPath}; call connect() or start() first`, {
          method,
        }),
      );
    }
    return new Promise<Live>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const onAbort = (): void => settle(() => reject(new HandoffError("aborted", `${method}: aborted while connecting`, { method })));
      const settle = (done: () => void): void => {
        if (timer !== undefined) clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        this.waiters.delete(waiter);
        done();
      };
      const waiter: ConnectionWaiter = {
        resolve: (live) => settle(() => resolve(live)),
        reject: (error) => settle(() => reject(error)),
      };
      this.waiters.add(waiter);
      if (Number.isFinite(timeoutMs)) {
        timer = setTimeout(() => {
          const why = this.lastConnectError ? ` (last attempt: ${this.lastConnectError.message})` : "";
          waiter.reject(new HandoffError("not-connected", `${method}: no connection to handoffd within ${timeoutMs} ms${why}`, { method }));
        }, Math.max(0, timeoutMs));
      }
      if (signal?.aborted) onAbort();
      else signal?.addEventListener("abort", onAbort, { once: true });
    });
  }

  // ---- daemon -> client ---------------------------------------------------------------------

  private async onRequest(method: string, params: unknown): Promise<unknown> {
    switch (method) {
      case methods.contextUsage.name: {
        if (!this.options.onUsage) return null;
        return (await this.options.onUsage(params as UsageRequestParams)) ?? null;
      }
      case methods.parentDeliver.name: {
        if (!this.options.onDeliver)
          throw new HandoffError("rpc", "this client takes no deliveries", { code: ErrorCode.MethodNotFound });
        await this.options.onDeliver(checkedParams(methods.parentDeliver, params));
        return {};
      }
      default:
        throw new HandoffError("rpc", `unknown method '${method}'`, { code: ErrorCode.MethodNotFound });
    }
  }
}

/** A method's result checked against its shape; one that does not fit is the daemon's fault. */
function checked<P, R>(method: RequestType<P, R>, result: unknown): R {
  try {
    return method.result.check(result, "");
  } catch (error) {
    if (!(error instanceof WireError)) throw error;
    throw new HandoffError("protocol", `${method.name}: the daemon's result does not fit: ${error.message}`, { method: method.name, cause: error });
  }
}

/** A daemon request's params checked against its shape; anything else is refused (a delivery stays queued). */
function checkedParams<P, R>(method: RequestType<P, R>, params: unknown): P {
  try {
    if (!isObject(params)) throw new WireError("params", "expected an object");
    return method.params.check(params, "");
  } catch (error) {
    if (!(error instanceof WireError)) throw error;
    throw new HandoffError("rpc", `${method.name}: ${error.message}`, { code: ErrorCode.InvalidParams });
  }
}
