// One error type for everything a call can end with besides its result.
import { ErrorCode } from "./protocol.js";

/**
 * Why a call failed:
 * - "rpc": the daemon answered with a JSON-RPC error (`code`, `message`, `data` are its own);
 * - "not-connected": no connection came up before the call's deadline (the request was never sent);
 * - "connection-lost": the connection closed after the request was sent and before its reply;
 *   the daemon may or may not have applied it (every handoff method is safe to resend);
 * - "timeout": no reply within the call's timeout (the request may still be applied);
 * - "aborted": the caller's AbortSignal fired (a sent request may still be applied);
 * - "closed": the client was closed by its owner;
 * - "protocol": the daemon sent something this client cannot use.
 */
export type HandoffErrorKind = "rpc" | "not-connected" | "connection-lost" | "timeout" | "aborted" | "closed" | "protocol";

export class HandoffError extends Error {
  override readonly name = "HandoffError";
  readonly kind: HandoffErrorKind;
  /** The JSON-RPC error code: the daemon's for "rpc", null for failures found on this side. */
  readonly code: number | null;
  /** The JSON-RPC error's `data` ("rpc" only), else undefined. */
  readonly data: unknown;
  /** The method of the failed call, when there was one. */
  readonly method: string | undefined;

  constructor(kind: HandoffErrorKind, message: string, options: { code?: number; data?: unknown; method?: string; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.kind = kind;
    this.code = options.code ?? null;
    this.data = options.data;
    this.method = options.method;
  }

  /** An error reply from the daemon. */
  static fromReply(method: string, error: { code: number; message: string; data?: unknown }): HandoffError {
    return new HandoffError("rpc", `${method}: ${error.message} (${error.code})`, {
      code: error.code,
      data: error.data,
      method,
    });
  }

  /**
   * Whether sending the same call again later can succeed: connection trouble, a timeout, or a
   * daemon that is stopping, overloaded or could not persist. Not for bad params or unknown ids.
   */
  get retryable(): boolean {
    switch (this.kind) {
      case "not-connected":
      case "connection-lost":
      case "timeout":
        return true;
      case "rpc":
        return (
          this.code === ErrorCode.ShuttingDown || this.code === ErrorCode.Overloaded || this.code === ErrorCode.StorageFailed
        );
      default:
        return false;
    }
  }
}
