// Every method of docs/protocol.md §6-7, described once (as vscode-jsonrpc's RequestType):
// its name, which way it goes, and the checks of its params and result (protocol.ts). The
// client sends by these (`client.request(methods.subagentCheck, params)` resolves to a checked
// CheckResult) and answers the daemon's requests by them. protocol/methods.hpp is the C++
// table; test/wire-description.test.ts keeps the two alike.
import {
  ArtifactReadParams,
  ArtifactReadResult,
  CancelParams,
  CancelRequestParams,
  CancelResult,
  CheckParams,
  CheckResult,
  CompletedParams,
  CompletedResult,
  DeliverParams,
  DeliverResult,
  GcParams,
  GcResult,
  InitializeParams,
  InitializeResult,
  ParentStateParams,
  ProgressParams,
  StartedParams,
  StartedResult,
  StatusParams,
  StatusResult,
  UsageAnswer,
  UsageRequestParams,
  WaitParams,
  WaitResult,
} from "./protocol.js";
import type { Check } from "./wire.js";

/** Client -> daemon, or daemon -> a parent's endpoint. */
export type Direction = "to_daemon" | "to_client";

/** A request: exactly one reply, a result or an error. */
export interface RequestType<P, R> {
  readonly kind: "request";
  readonly name: string;
  readonly direction: Direction;
  readonly params: Check<P>;
  readonly result: Check<R>;
}

/** A notification: no reply. */
export interface NotificationType<P> {
  readonly kind: "notification";
  readonly name: string;
  readonly direction: Direction;
  readonly params: Check<P>;
}

function request<P, R>(name: string, direction: Direction, params: Check<P>, result: Check<R>): RequestType<P, R> {
  return { kind: "request", name, direction, params, result };
}

function notification<P>(name: string, params: Check<P>): NotificationType<P> {
  return { kind: "notification", name, direction: "to_daemon", params };
}

export const methods = {
  // ---- client -> daemon ----
  initialize: request("initialize", "to_daemon", InitializeParams, InitializeResult),
  subagentStarted: request("subagent/started", "to_daemon", StartedParams, StartedResult),
  subagentProgress: notification("subagent/progress", ProgressParams),
  subagentCompleted: request("subagent/completed", "to_daemon", CompletedParams, CompletedResult),
  subagentCheck: request("subagent/check", "to_daemon", CheckParams, CheckResult),
  subagentWait: request("subagent/wait", "to_daemon", WaitParams, WaitResult),
  subagentCancel: request("subagent/cancel", "to_daemon", CancelParams, CancelResult),
  parentState: notification("parent/state", ParentStateParams),
  /** Gives up a request of the same connection (only a wait still asleep), as in LSP. */
  cancelRequest: notification("$/cancelRequest", CancelRequestParams),
  artifactRead: request("artifact/read", "to_daemon", ArtifactReadParams, ArtifactReadResult),
  daemonStatus: request("daemon/status", "to_daemon", StatusParams, StatusResult),
  daemonGc: request("daemon/gc", "to_daemon", GcParams, GcResult),
  // ---- daemon -> a parent's endpoint ----
  contextUsage: request("context/usage", "to_client", UsageRequestParams, UsageAnswer),
  parentDeliver: request("parent/deliver", "to_client", DeliverParams, DeliverResult),
} as const;

export type MethodType = (typeof methods)[keyof typeof methods];
