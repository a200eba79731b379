// JSON-RPC 2.0 over one connected socket, both directions: our requests (ids, timeouts,
// cancellation), our notifications, and the other side's requests answered by a handler.
// One JsonRpcPeer lives exactly as long as its socket; reconnecting makes a new one.
import type { Socket } from "node:net";

import { HandoffError } from "./errors.js";
import { encodeFrame, FrameTooLargeError, LineDecoder } from "./framing.js";
import { methods } from "./methods.js";
import { ErrorCode } from "./protocol.js";
import { isObject } from "./wire.js";

/** Answers one incoming request; a throw becomes a JSON-RPC error reply (see replyError). */
export type IncomingRequestHandler = (method: string, params: unknown) => unknown;

export interface PeerOptions {
  maxFrameBytes: number;
  /** Answers the other side's requests. */
  onRequest: IncomingRequestHandler;
  /** Incoming notifications (handoffd sends none today). */
  onNotification?: (method: string, params: unknown) => void;
  /** Something unusable arrived (bad JSON, a reply nobody waits for...); the peer keeps going. */
  onProtocolError?: (description: string) => void;
  /** Once, when the socket has closed; `error` says why when it was not a clean end. */
  onClose?: (error: Error | undefined) => void;
}

export interface RequestOptions {
  /** Give up after this many ms (kind "timeout"); undefined: wait as long as the connection lives. */
  timeoutMs?: number | undefined;
  /** Give up when aborted (kind "aborted"); the request may still be applied. */
  signal?: AbortSignal | undefined;
  /**
   * When aborted: also send `$/cancelRequest` for it and hand the reply that still comes (the
   * daemon's -32800, or the answer it had already written) to this instead of dropping it;
   * called once, with an error of kind "closed"/"connection-lost" if the connection ends first.
   */
  onLateReply?: ((reply: { result: unknown } | { error: HandoffError }) => void) | undefined;
}

interface PendingRequest {
  method: string;
  resolve: (result: unknown) => void;
  reject: (error: HandoffError) => void;
}

type Id = number | string;

export class JsonRpcPeer {
  private readonly pending = new Map<Id, PendingRequest>();
  private readonly decoder: LineDecoder;
  private nextId = 1;
  private closeError: Error | undefined;
  private isClosed = false;

  constructor(
    private readonly socket: Socket,
    private readonly options: PeerOptions,
  ) {
    this.decoder = new LineDecoder(options.maxFrameBytes);
    socket.on("data", (chunk: Buffer) => this.onData(chunk));
    socket.on("error", (error: Error) => {
      this.closeError ??= error;
    });
    socket.on("close", () => this.onClosed());
  }

  get closed(): boolean {
    return this.isClosed;
  }

  /** Sends a request (`params` undefined: none); resolves with its result, rejects with a HandoffError. */
  request(method: string, params: unknown, options: RequestOptions = {}): Promise<unknown> {
    if (this.isClosed) return Promise.reject(new HandoffError("not-connected", `${method}: not connected to handoffd`, { method }));
    const { signal, timeoutMs, onLateReply } = options;
    if (signal?.aborted) return Promise.reject(new HandoffError("aborted", `${method}: aborted before it was sent`, { method }));
    const id = this.nextId++;
    return new Promise<unknown>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const onAbort = (): void => {
        finish(() => reject(new HandoffError("aborted", `${method}: aborted by the caller`, { method })));
        if (onLateReply === undefined || this.isClosed) return;
        // The reply still on its way goes to onLateReply; the daemon learns we gave up.
        this.pending.set(id, {
          method,
          resolve: (result) => {
            this.pending.delete(id);
            onLateReply({ result });
          },
          reject: (error) => {
            this.pending.delete(id);
            onLateReply({ error });
          },
        });
        this.notify(methods.cancelRequest.name, { id });
      };
      const finish = (settle: () => void): void => {
        if (timer !== undefined) clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        this.pending.delete(id);
        settle();
      };
      this.pending.set(id, {
        method,
        resolve: (result) => finish(() => resolve(result)),
        reject: (error) => finish(() => reject(error)),
      });
      if (timeoutMs !== undefined && Number.isFinite(timeoutMs)) {
        timer = setTimeout(
          () => finish(() => reject(new HandoffError("timeout", `${method}: no reply from handoffd within ${timeoutMs} ms`, { method }))),
          timeoutMs,
        );
      }
      signal?.addEventListener("abort", onAbort, { once: true });
      this.write(params === undefined ? { jsonrpc: "2.0", id, method } : { jsonrpc: "2.0", id, method, params });
    });
  }

  /** Sends a notification; false when the socket is already closed (nothing was sent). */
  notify(method: string, params: unknown): boolean {
    if (this.isClosed) return false;
    this.write(params === undefined ? { jsonrpc: "2.0", method } : { jsonrpc: "2.0", method, params });
    return true;
  }

  /** Closes the socket at once; pending requests fail with `kind`. */
  close(kind: "closed" | "connection-lost" = "closed", why = "the client was closed"): void {
    this.failPending(kind, why);
    this.socket.destroy();
  }

  private write(message: unknown): void {
    if (this.socket.destroyed || !this.socket.writable) return;  // the close handler fails the callers
    this.socket.write(encodeFrame(message));
  }

  private onData(chunk: Buffer): void {
    let lines: string[];
    try {
      lines = this.decoder.push(chunk);
    } catch (error) {
      if (!(error instanceof FrameTooLargeError)) throw error;
      // The stream cannot be resynchronised without buffering the frame: drop the connection.
      this.closeError = error;
      this.options.onProtocolError?.(error.message);
      this.socket.destroy();
      return;
    }
    for (const line of lines) this.onFrame(line);
  }

  private onFrame(line: string): void {
    let message: unknown;
    try {
      message = JSON.parse(line);
    } catch {
      this.options.onProtocolError?.(`not JSON: ${line.slice(0, 200)}`);
      return;
    }
    if (!isObject(message) || message["jsonrpc"] !== "2.0") {
      this.options.onProtocolError?.(`not a JSON-RPC 2.0 message: ${line.slice(0, 200)}`);
      return;
    }
    const id = message["id"];
    const method = message["method"];
    if (typeof method === "string") {
      if (id === undefined || id === null) this.options.onNotification?.(method, message["params"]);
      else if (typeof id === "number" || typeof id === "string") void this.answer(id, method, message["params"]);
      else this.options.onProtocolError?.(`request with an invalid id: ${line.slice(0, 200)}`);
      return;
    }
    if (typeof id !== "number" && typeof id !== "string") {
      this.options.onProtocolError?.(`response without a usable id: ${line.slice(0, 200)}`);
      return;
    }
    const waiting = this.pending.get(id);
    if (waiting === undefined) {
      this.options.onProtocolError?.(`reply to request ${String(id)} that nobody waits for (timed out or aborted)`);
      return;
    }
    const error = message["error"];
    if (isObject(error) && typeof error["code"] === "number" && typeof error["message"] === "string")
      waiting.reject(HandoffError.fromReply(waiting.method, { code: error["code"], message: error["message"], data: error["data"] }));
    else if ("result" in message) waiting.resolve(message["result"]);
    else waiting.reject(new HandoffError("protocol", `${waiting.method}: reply with neither result nor error`, { method: waiting.method }));
  }

  private async answer(id: Id, method: string, params: unknown): Promise<void> {
    let reply: unknown;
    try {
      const result = await this.options.onRequest(method, params);
      reply = { jsonrpc: "2.0", id, result: result === undefined ? null : result };
    } catch (error) {
      reply = { jsonrpc: "2.0", id, error: replyError(error) };
    }
    this.write(reply);  // dropped when the socket closed meanwhile: the daemon resends what it still wants
  }

  private onClosed(): void {
    if (this.isClosed) return;
    this.isClosed = true;
    this.failPending("connection-lost", this.closeError?.message ?? "handoffd closed the connection");
    this.options.onClose?.(this.closeError);
  }

  private failPending(kind: "closed" | "connection-lost", why: string): void {
    for (const [, waiting] of this.pending) {
      const text =
        kind === "closed"
          ? `${waiting.method}: ${why}`
          : `${waiting.method}: connection to handoffd lost before its reply (${why}); it may or may not have been applied, retry it`;
      waiting.reject(new HandoffError(kind, text, { method: waiting.method }));
    }
    this.pending.clear();
  }
}

/** The JSON-RPC error object for a failed handler: a HandoffError's own code, else internal error. */
export function replyError(error: unknown): { code: number; message: string; data?: unknown } {
  if (error instanceof HandoffError && error.code !== null) {
    return error.data === undefined
      ? { code: error.code, message: error.message }
      : { code: error.code, message: error.message, data: error.data };
  }
  return { code: ErrorCode.InternalError, message: error instanceof Error ? error.message : String(error) };
}

export { isObject };
