// What pi-subagents (npm, 0.67.x) hands the parent, read without importing it: the children of a
// foreground `subagent` tool result, and the parts of a background `subagent-notify` message.
// Pure functions over the shapes pi-subagents produces; the bridge (pi-subagents-bridge.ts)
// decides what to do with them.
//
// Shapes relied on (pi-subagents 0.67.0, src/shared/types.ts and src/runs/background/notify.ts):
// - foreground: `details.results[]`, one per child, with `agent`, optional
//   `workflowKey`, `exitCode`, optional `error`, and the answer as `finalOutput` or, failing that,
//   the last assistant message in `messages`;
// - background: `content` is a string whose first line is what its renderer parses
//   (`Background task completed: **agent**`), optionally followed by a `Workflow receipt: ...`
//   line, then a blank line and the body; `subagent:async-complete` carries the run `id`, and
//   per child `agent` and `summary` (the text the body repeats).
import type { ResultStatus } from "./protocol.js";

/** One child's answer, ready for `subagent/completed`. */
export interface ChildAnswer {
  /** Unique within the parent session. */
  childId: string;
  title: string;
  status: ResultStatus;
  error?: string;
  finalText: string;
}

/** Text parts of a tool result or message content, joined as Pi shows them to the model. */
export function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .filter((part): part is { type: "text"; text: string } => isRecord(part) && part.type === "text" && typeof part.text === "string")
    .map((part) => part.text)
    .join("\n");
}

/** True when content holds anything but text (an image): the bridge leaves such results alone. */
export function hasNonText(content: unknown): boolean {
  return Array.isArray(content) && content.some((part) => !isRecord(part) || part.type !== "text");
}

/**
 * The children of a foreground `subagent` result that produced an answer, in result order.
 * `callId` (the tool call's id) makes their ids unique within the session.
 */
export function foregroundChildren(callId: string, details: unknown): ChildAnswer[] {
  if (!isRecord(details) || !Array.isArray(details.results)) return [];
  const children: ChildAnswer[] = [];
  details.results.forEach((result: unknown, position: number) => {
    if (!isRecord(result)) return;
    const finalText = answerOf(result);
    if (finalText === undefined) return;
    const agent = typeof result.agent === "string" ? result.agent : "subagent";
    const key = typeof result.workflowKey === "string" && result.workflowKey !== "" ? result.workflowKey : undefined;
    const error = typeof result.error === "string" && result.error !== "" ? result.error : undefined;
    const failed = error !== undefined || (typeof result.exitCode === "number" && result.exitCode !== 0);
    children.push({
      childId: `${callId}/${position}`,  // workflow children all have index 0
      title: key === undefined ? agent : `${agent} ${key}`,
      status: failed ? "error" : "done",
      ...(failed ? { error: error ?? `exit code ${String(result.exitCode)}` } : {}),
      finalText,
    });
  });
  return children;
}

function answerOf(result: Raw): string | undefined {
  if (typeof result.finalOutput === "string") return result.finalOutput;
  if (!Array.isArray(result.messages)) return undefined;
  for (let i = result.messages.length - 1; i >= 0; i -= 1) {
    const message: unknown = result.messages[i];
    if (isRecord(message) && message.role === "assistant") return textOf(message.content);
  }
  return undefined;
}

/** A `subagent-notify` message split where its renderer reads it. */
export interface NotifyParts {
  /** The first line (and a `Workflow receipt:` line right after it), kept as they are. */
  header: string;
  /** Everything after the header's blank separator line. */
  body: string;
}

const NOTIFY_FIRST_LINE = /^(Background tasks? |Detached foreground task )/;

/** The header and body of a notify message, or undefined when its first line is not one. */
export function splitNotify(content: string): NotifyParts | undefined {
  const lines = content.split("\n");
  if (!NOTIFY_FIRST_LINE.test(lines[0] ?? "")) return undefined;
  const headerLines = lines[1]?.startsWith("Workflow receipt: ") === true && lines[2] === "" ? 2 : 1;
  if (lines[headerLines] !== "") return undefined;
  return { header: lines.slice(0, headerLines).join("\n"), body: lines.slice(headerLines + 1).join("\n") };
}

/** What `subagent:async-complete` told about one background run. */
export interface AsyncCompletion {
  /** pi-subagents' run id (the one `subagent:async-started` named). */
  runId: string;
  agent: string;
  success: boolean;
  /** The run's summary: the text its notify message repeats in the body. */
  summary: string;
}

/** Reads a `subagent:async-complete` payload; undefined when it is not one. */
export function asyncCompletion(payload: unknown): AsyncCompletion | undefined {
  if (!isRecord(payload) || typeof payload.id !== "string" || typeof payload.summary !== "string") return undefined;
  return {
    runId: payload.id,
    agent: typeof payload.agent === "string" ? payload.agent : "subagent",
    success: payload.success === true,
    summary: payload.summary,
  };
}

/** Reads a `subagent:async-started` payload: the run id and its agent. */
export function asyncStart(payload: unknown): { runId: string; agent: string } | undefined {
  if (!isRecord(payload) || typeof payload.id !== "string") return undefined;
  return { runId: payload.id, agent: typeof payload.agent === "string" ? payload.agent : "subagent" };
}

/** The handoff child id of a background run. */
export function backgroundChildId(runId: string): string {
  return `async/${runId}`;
}

/** The fields read from pi-subagents' objects, each still to be checked. */
interface Raw {
  type?: unknown;
  text?: unknown;
  role?: unknown;
  content?: unknown;
  results?: unknown;
  index?: unknown;
  agent?: unknown;
  workflowKey?: unknown;
  exitCode?: unknown;
  error?: unknown;
  finalOutput?: unknown;
  messages?: unknown;
  id?: unknown;
  success?: unknown;
  summary?: unknown;
}

function isRecord(value: unknown): value is Raw {
  return typeof value === "object" && value !== null;
}
