// The wire shapes of handoffd's JSON-RPC 2.0 protocol, mirroring protocol/messages.hpp and
// daemon_messages.hpp (the reference; docs/protocol.md documents every field). Each shape is a
// check (wire.ts) and the type derived from it, under one name: `WaitResult` checks a result and
// types it. test/wire-description.test.ts compares them with the daemon's own descriptions.
// Names are camelCase as on the wire. Sizes are UTF-8 bytes; line counts follow Pi's `read`
// (text.split("\n"), 1-based). `optional` members may be absent; `nullable` ones are always
// there and may be null.
import {
  anyObject,
  arrayOf,
  bool,
  nullable,
  num,
  object,
  oneOf,
  optional,
  orNull,
  str,
  stringOrInteger,
  strings,
  type Value,
} from "./wire.js";


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

// ---- shared shapes --------------------------------------------------------------------------

/** The harnesses a footer's calls can be for (protocol/messages.hpp's reader_names, in order). */
export const READER_NAMES = ["pi", "claude-code", "codex", "gemini", "opencode", "cline", "copilot"] as const;

/** How a child's run ended. */

export const ResultStatus = oneOf("done", "error", "cancelled");
export type ResultStatus = Value<typeof ResultStatus>;

/** Where a child stands in the daemon. `forgotten` (check only): delivered, then forgotten after the daemon's --forget-after-ms. */
export const ChildState = oneOf("running", "completed", "delivering", "delivered", "cancelled", "forgotten");
export type ChildState = Value<typeof ChildState>;

/** Pi's ContextUsage; `tokens`/`percent` are null after compaction until the next reply. */
export const ContextUsage = object({
  tokens: nullable(num),
  /** The model's context window in tokens; > 0 to be usable. */
  contextWindow: num,
  percent: nullable(num),
});
export type ContextUsage = Value<typeof ContextUsage>;

/** Where a cut result's full text is. `path` when saved, `reason` when not. */
export const Artifact = object({
  saved: bool,
  /** Absolute path of the artifact file; only when `saved`. */
  path: optional(str),
  /** SHA-256 of the full text, 64 lowercase hex (the file's name). */
  sha256: str,
  /** Why the full text was not saved; only when `!saved`. */
  reason: optional(str),
});
export type Artifact = Value<typeof Artifact>;

/** The omitted middle of a cut result, as arguments for Pi's `read`: first omitted line (1-based) and how many. */
export const OmittedRange = object({ offset: num, limit: num });
export type OmittedRange = Value<typeof OmittedRange>;

/** One result in a batch. */
export const Section = object({
  childId: str,
  title: str,
  status: ResultStatus,
  /** The child's error text; absent when none. */
  error: optional(str),
  /** The projection: the full text, or head + marker + tail + footer when `truncated`. */
  text: str,
  truncated: bool,
  totalBytes: num,
  totalLines: num,
  /** Set when `truncated`. */
  omitted: nullable(OmittedRange),
  /** Set when `truncated`. */
  artifact: nullable(Artifact),
});
export type Section = Value<typeof Section>;

/** How a batch's budget was decided. */
export const Budget = object({
  mode: oneOf("static", "dynamic"),
  /** Plain words, e.g. "static: no usage". */
  basis: str,
  batchCapBytes: num,
  staticBatchBytes: num,
  perResultBytes: num,
  floorBytes: num,
  maxLines: num,
  /** The usage a dynamic budget was based on. */
  usage: nullable(ContextUsage),
  headroomBytes: nullable(num),
});
export type Budget = Value<typeof Budget>;

/** A projected batch: `subagent/wait`'s result and `parent/deliver`'s params share it. */
export const Batch = object({
  /** One per delivered result, in completion order. */
  sections: arrayOf(Section.shape),
  /** The rendered message the parent model reads (<= budget.batchCapBytes). */
  text: str,
  /** Results held back for a later flush. */
  deferred: num,
  budget: Budget,
});
export type Batch = Value<typeof Batch>;

// ---- client -> daemon -----------------------------------------------------------------------

export const InitializeParams = object({
  protocolVersion: optional(str),
  clientName: optional(str),
  /** Makes this connection the parent's endpoint (context/usage, parent/deliver). */
  parentId: optional(str),
});
export type InitializeParams = Value<typeof InitializeParams>;
export const InitializeResult = object({
  protocolVersion: str,
  serverVersion: str,
  /** Echoed when registered as the parent's endpoint. */
  parentId: nullable(str),
  artifactDir: str,
  /** The effective caps (frame, fields, surfaces); see docs/protocol.md. */
  limits: anyObject,
});
export type InitializeResult = Value<typeof InitializeResult>;

export const StartedParams = object({ parentId: str, childId: str, title: optional(str) });
export type StartedParams = Value<typeof StartedParams>;
/** `state`: "running", or the state the child already had. */
export const StartedResult = object({ state: ChildState });
export type StartedResult = Value<typeof StartedResult>;

/** A notification: recent activity for `check` previews. */
export const ProgressParams = object({ parentId: str, childId: str, text: str });
export type ProgressParams = Value<typeof ProgressParams>;

export const CompletedParams = object({
  parentId: str,
  childId: str,
  title: optional(str),
  status: ResultStatus,
  error: optional(str),
  /** The exact final answer. */
  finalText: str,
});
export type CompletedParams = Value<typeof CompletedParams>;
export const CompletedResult = object({
  /** An identical completion was already held (resending is harmless). */
  duplicate: bool,
  sha256: str,
  bytes: num,
  lines: num,
});
export type CompletedResult = Value<typeof CompletedResult>;

export const CheckParams = object({ parentId: str, childId: str });
export type CheckParams = Value<typeof CheckParams>;
export const CheckResult = object({
  childId: str,
  title: str,
  state: ChildState,
  /** Set once completed. */
  status: nullable(ResultStatus),
  error: optional(str),
  /** <= 2 KiB / 20 lines: the progress tail, or the final text's tail. */
  preview: str,
  previewTruncated: bool,
  bytes: nullable(num),
  lines: nullable(num),
});
export type CheckResult = Value<typeof CheckResult>;

export const WaitParams = object({
  parentId: str,
  /** 1..64 unique ids. */
  childIds: strings,
  /** 0..24 h; absent: until every listed child completed. */
  timeoutMs: optional(num),
  /** The parent's usage for a dynamic budget; absent: the daemon asks the parent's endpoint. */
  usage: optional(ContextUsage),
  /** 0..64 siblings of childIds that share this wait's budget (docs/protocol.md). */
  batchWith: optional(strings),
  /** Whose tools the footers' calls are for; default "pi". */
  reader: optional(oneOf(...READER_NAMES)),
  /** Also take every other completed, undelivered child of the parent into the batch. */
  withReady: optional(bool),
  /** The most bytes of the answer the harness shows whole (>= 4096): the batch is kept within it. */
  maxBytes: optional(num),
});
export type WaitParams = Value<typeof WaitParams>;
export const WaitResult = object({
  ...Batch.shape,
  /** Returned at timeoutMs with children still running. */
  timedOut: bool,
  /** Listed children not completed yet. */
  pending: strings,
  /** Listed children whose results were delivered before this wait (not repeated here). */
  alreadyDelivered: optional(strings),
  /** Listed children the parent cancelled. */
  cancelled: optional(strings),
  /** Listed children delivered long ago and forgotten since (--forget-after-ms): not repeated. */
  forgotten: optional(strings),
});
export type WaitResult = Value<typeof WaitResult>;

export const CancelParams = object({ parentId: str, childIds: strings });
export type CancelParams = Value<typeof CancelParams>;
export const CancelResult = object({
  /** The ids the daemon knew. */
  cancelled: strings,
  /** Completed results dropped with them. */
  consumed: num,
});
export type CancelResult = Value<typeof CancelResult>;

export const ParentState = oneOf("busy", "idle");
export type ParentState = Value<typeof ParentState>;
/** A notification: `idle` triggers auto-delivery. */
export const ParentStateParams = object({ parentId: str, state: ParentState });
export type ParentStateParams = Value<typeof ParentStateParams>;

/** A notification: gives up a request of the same connection (only a wait still asleep). */
export const CancelRequestParams = object({ id: stringOrInteger });
export type CancelRequestParams = Value<typeof CancelRequestParams>;

export const ArtifactReadParams = object({
  /** 64 lowercase hex. */
  sha256: str,
  /** First line, 1-based; default 1. */
  offset: optional(num),
  /** Max lines, >= 1; default: to the end (still capped at 2000 lines / 50 KiB). */
  limit: optional(num),
});
export type ArtifactReadParams = Value<typeof ArtifactReadParams>;
export const ArtifactReadResult = object({
  path: str,
  /** The lines, joined with "\n". */
  text: str,
  firstLine: num,
  lastLine: num,
  totalLines: num,
  /** Stopped by the page cap before `limit`. */
  cut: bool,
  /** Where to continue when lines remain. */
  nextOffset: nullable(num),
});
export type ArtifactReadResult = Value<typeof ArtifactReadResult>;

/** `daemon/status` takes no params. */
export const StatusParams = object({});
export type StatusParams = Value<typeof StatusParams>;
/** `daemon/status`: counts, queue depth, uptime; members added later are kept. */
export const StatusResult = object({
  version: str,
  uptimeMs: num,
  connections: num,
  parents: num,
  children: object({ running: num, completed: num, delivering: num, delivered: num }),
  /** `subagent/wait` calls asleep, waiting for their children. */
  waits: num,
  queue: object({ dir: str, results: num, textBytes: num, deliveries: num, tombstones: num, groups: num, changes: num }),
  /** The artifact store: files and bytes, or `error` when it cannot be read. */
  store: object({ dir: str, files: optional(num), bytes: optional(num), error: optional(str) }),
});
export type StatusResult = Value<typeof StatusResult>;

/** `daemon/gc`: `dryRun` plans only. */
export const GcParams = object({ dryRun: optional(bool) });
export type GcParams = Value<typeof GcParams>;
export const GcResult = object({
  dryRun: bool,
  /** What went (a dry run: what would go); `sha256` null for a temp file; `reason` "age", "size" or "temp". */
  removed: arrayOf({ name: str, sha256: nullable(str), bytes: num, mtimeUnixS: num, reason: str }),
  removedBytes: num,
  keptFiles: num,
  keptBytes: num,
  protectedFiles: num,
  protectedBytes: num,
  overQuota: bool,
  ignored: num,
  skipped: num,
  tombstonesExpired: num,
  limits: object({ maxAgeS: num, maxBytes: num, keepDeliveredS: num }),
  problems: strings,
});
export type GcResult = Value<typeof GcResult>;

// ---- daemon -> client -----------------------------------------------------------------------

export const UsageRequestParams = object({ parentId: str });
export type UsageRequestParams = Value<typeof UsageRequestParams>;
/** `context/usage` answers a ContextUsage, or null when unknown. */
export const UsageAnswer = orNull(ContextUsage);
export type UsageAnswer = Value<typeof UsageAnswer>;

export const DeliverParams = object({
  parentId: str,
  /** Stable across resends of the same batch. */
  deliveryId: str,
  ...Batch.shape,
});
export type DeliverParams = Value<typeof DeliverParams>;
/** `parent/deliver` is acknowledged with {}. */
export const DeliverResult = object({});
export type DeliverResult = Value<typeof DeliverResult>;
