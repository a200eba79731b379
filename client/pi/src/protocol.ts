// The wire shapes of handoffd's JSON-RPC 2.0 protocol, mirroring protocol/messages.hpp (the
// reference; docs/protocol.md documents every field). Names are camelCase as on the wire.
// Sizes are UTF-8 bytes; line counts follow Pi's `read` (text.split("\n"), 1-based).
// Optional members may be absent; `| null` members are always present and may be null.

/** The protocol version this client speaks (`initialize.protocolVersion`). */
export const PROTOCOL_VERSION = "1";

/** JSON-RPC error codes: the spec's and handoffd's own (protocol/jsonrpc.hpp). */
export const ErrorCode = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  UnknownParent: -32001,
  UnknownChild: -32002,
  FrameTooLarge: -32003,
  TooManyConnections: -32004,
  StorageFailed: -32005,
  Conflict: -32006,
  NotFound: -32007,
  ShuttingDown: -32008,
  RequestTimeout: -32009,
  Overloaded: -32010,
  /** `subagent/wait` given up with `$/cancelRequest` while still asleep: nothing was taken. */
  RequestCancelled: -32800,
} as const;

/** The method names, fixed by docs/protocol.md §6-7. */
export const Method = {
  Initialize: "initialize",
  Started: "subagent/started",
  Progress: "subagent/progress",
  Completed: "subagent/completed",
  Check: "subagent/check",
  Wait: "subagent/wait",
  Cancel: "subagent/cancel",
  ParentState: "parent/state",
  ArtifactRead: "artifact/read",
  Status: "daemon/status",
  ContextUsage: "context/usage",
  Deliver: "parent/deliver",
  /** A notification: gives up a request of the same connection (only a wait still asleep). */
  CancelRequest: "$/cancelRequest",
} as const;

// ---- shared shapes --------------------------------------------------------------------------

/** Pi's ContextUsage; `tokens`/`percent` are null after compaction until the next reply. */
export interface ContextUsage {
  tokens: number | null;
  /** The model's context window in tokens; > 0 to be usable. */
  contextWindow: number;
  percent: number | null;
}

/** How a child's run ended. */
export type ResultStatus = "done" | "error" | "cancelled";

/** Where a child stands in the daemon. */
/** `forgotten` (check only): delivered, then forgotten after the daemon's --forget-after-ms. */
export type ChildState = "running" | "completed" | "delivering" | "delivered" | "cancelled" | "forgotten";

/** Where a cut result's full text is. `path` when saved, `reason` when not. */
export interface Artifact {
  saved: boolean;
  /** Absolute path of the artifact file; only when `saved`. */
  path?: string;
  /** SHA-256 of the full text, 64 lowercase hex (the file's name). */
  sha256: string;
  /** Why the full text was not saved; only when `!saved`. */
  reason?: string;
}

/** The omitted middle of a cut result, as arguments for Pi's `read`. */
export interface OmittedRange {
  /** First omitted line, 1-based. */
  offset: number;
  /** Number of omitted lines. */
  limit: number;
}

/** One result in a batch. */
export interface Section {
  childId: string;
  title: string;
  status: ResultStatus;
  /** The child's error text; absent when none. */
  error?: string;
  /** The projection: the full text, or head + marker + tail + footer when `truncated`. */
  text: string;
  truncated: boolean;
  totalBytes: number;
  totalLines: number;
  /** Set when `truncated`. */
  omitted: OmittedRange | null;
  /** Set when `truncated`. */
  artifact: Artifact | null;
}

/** How a batch's budget was decided. */
export interface Budget {
  mode: "static" | "dynamic";
  /** Plain words, e.g. "static: no usage". */
  basis: string;
  batchCapBytes: number;
  staticBatchBytes: number;
  perResultBytes: number;
  floorBytes: number;
  maxLines: number;
  /** The usage a dynamic budget was based on. */
  usage: ContextUsage | null;
  headroomBytes: number | null;
}

/** A projected batch: `subagent/wait`'s result and `parent/deliver`'s params share it. */
export interface Batch {
  /** One per delivered result, in completion order. */
  sections: Section[];
  /** The rendered message the parent model reads (<= budget.batchCapBytes). */
  text: string;
  /** Results held back for a later flush. */
  deferred: number;
  budget: Budget;
}

// ---- client -> daemon -----------------------------------------------------------------------

export interface InitializeParams {
  protocolVersion?: string;
  clientName?: string;
  /** Makes this connection the parent's endpoint (context/usage, parent/deliver). */
  parentId?: string;
}
export interface InitializeResult {
  protocolVersion: string;
  serverVersion: string;
  /** Echoed when registered as the parent's endpoint. */
  parentId: string | null;
  artifactDir: string;
  /** The effective caps (frame, fields, surfaces); see docs/protocol.md. */
  limits: Record<string, unknown>;
}

export interface StartedParams {
  parentId: string;
  childId: string;
  title?: string;
}
export interface StartedResult {
  /** "running", or the state the child already had. */
  state: ChildState;
}

/** A notification: recent activity for `check` previews. */
export interface ProgressParams {
  parentId: string;
  childId: string;
  text: string;
}

export interface CompletedParams {
  parentId: string;
  childId: string;
  title?: string;
  status: ResultStatus;
  error?: string;
  /** The exact final answer. */
  finalText: string;
}
export interface CompletedResult {
  /** An identical completion was already held (resending is harmless). */
  duplicate: boolean;
  sha256: string;
  bytes: number;
  lines: number;
}

export interface CheckParams {
  parentId: string;
  childId: string;
}
export interface CheckResult {
  childId: string;
  title: string;
  state: ChildState;
  /** Set once completed. */
  status: ResultStatus | null;
  error?: string;
  /** <= 2 KiB / 20 lines: the progress tail, or the final text's tail. */
  preview: string;
  previewTruncated: boolean;
  bytes: number | null;
  lines: number | null;
}

export interface WaitParams {
  parentId: string;
  /** 1..64 unique ids. */
  childIds: string[];
  /** 0..24 h; absent: until every listed child completed. */
  timeoutMs?: number;
  /** The parent's usage for a dynamic budget; absent: the daemon asks the parent's endpoint. */
  usage?: ContextUsage;
}
export interface WaitResult extends Batch {
  /** Returned at timeoutMs with children still running. */
  timedOut: boolean;
  /** Listed children not completed yet. */
  pending: string[];
  /** Listed children whose results were delivered before this wait (not repeated here). */
  alreadyDelivered?: string[];
  /** Listed children the parent cancelled. */
  cancelled?: string[];
  /** Listed children delivered long ago and forgotten since (--forget-after-ms): not repeated. */
  forgotten?: string[];
}

export interface CancelParams {
  parentId: string;
  childIds: string[];
}
export interface CancelResult {
  /** The ids the daemon knew. */
  cancelled: string[];
  /** Completed results dropped with them. */
  consumed: number;
}

export type ParentState = "busy" | "idle";
/** A notification: `idle` triggers auto-delivery. */
export interface ParentStateParams {
  parentId: string;
  state: ParentState;
}

export interface ArtifactReadParams {
  /** 64 lowercase hex. */
  sha256: string;
  /** First line, 1-based; default 1. */
  offset?: number;
  /** Max lines, >= 1; default: to the end (still capped at 2000 lines / 50 KiB). */
  limit?: number;
}
export interface ArtifactReadResult {
  path: string;
  /** The lines, joined with "\n". */
  text: string;
  firstLine: number;
  lastLine: number;
  totalLines: number;
  /** Stopped by the page cap before `limit`. */
  cut: boolean;
  /** Where to continue when lines remain. */
  nextOffset: number | null;
}

/** `daemon/status`: free-form; the members this package relies on are typed. */
export interface StatusResult {
  version: string;
  uptimeMs: number;
  connections: number;
  parents: number;
  children: { running: number; completed: number; delivering: number; delivered: number };
  /** `subagent/wait` calls asleep, waiting for their children. */
  waits: number;
  queue: {
    dir: string;
    results: number;
    textBytes: number;
    deliveries: number;
    tombstones: number;
    groups: number;
    changes: number;
  };
  /** The artifact store: files and bytes, or `error` when it cannot be read. */
  store: { dir: string; files?: number; bytes?: number; error?: string };
  [extra: string]: unknown;
}

// ---- daemon -> client -----------------------------------------------------------------------

export interface UsageRequestParams {
  parentId: string;
}
/** `context/usage` answers a ContextUsage, or null when unknown. */
export type UsageAnswer = ContextUsage | null;

export interface DeliverParams extends Batch {
  parentId: string;
  /** Stable across resends of the same batch. */
  deliveryId: string;
}
