// subagent_list's text: every child of the session, one line each, within LIST_MAX_BYTES.
//
//   Subagents of this session: 3 (1 running, 1 completed, 1 delivered).
//   sa-7a8b9c "Fix the lexer" running · turn 1 · 1 more turn queued
//   sa-4d5e6f "Run the tests" completed · turn 1 · 19 B, 1 line
//   sa-1a2b3c "Audit the parser" delivered · turn 2 · 167.0 KB, 3000 lines · cut, full text: /…/<sha256>.txt
//
// A child's state and turn are those of its current turn: the first one not over, else its last.
// When the lines do not all fit, the children that still matter most are listed first (running,
// queued, completed, then delivered and cancelled; in spawn order within each) and the rest are
// counted by state in a last line. Forgotten children (delivered, then kept no longer) are only
// counted. A plain function of its input (tested without Pi).
import { formatBytes } from "./render.js";

/** The most bytes (UTF-8) of subagent_list's text. */
export const LIST_MAX_BYTES = 2048;
/** Longest title shown, chars. */
const TITLE_CHARS = 40;

export type ListState = "queued" | "running" | "completed" | "delivered" | "cancelled";

export interface ChildLine {
  id: string;
  title: string;
  /** Of its current turn: queued (behind its previous turn or other children), running, completed (not delivered yet), delivered, cancelled. */
  state: ListState;
  /** Its current turn, 1-based. */
  turn: number;
  /** The current turn's result, once finished. */
  bytes?: number | undefined;
  lines?: number | undefined;
  /** The current turn ended in an error. */
  error?: boolean;
  /** The full text's file, when a delivery cut the current turn's result. */
  artifact?: string;
  /** Turns sent after the current one, not started yet. */
  queuedTurns?: number;
}

const STATE_ORDER: readonly ListState[] = ["running", "queued", "completed", "delivered", "cancelled"];

export function childLine(child: ChildLine): string {
  const title = child.title.length <= TITLE_CHARS ? child.title : `${child.title.slice(0, TITLE_CHARS - 1)}…`;
  let line = `${child.id} ${JSON.stringify(title)} ${child.state}${child.error === true ? " (error)" : ""} · turn ${child.turn}`;
  if (child.bytes !== undefined && child.lines !== undefined) line += ` · ${formatBytes(child.bytes)}, ${child.lines} line${child.lines === 1 ? "" : "s"}`;
  if (child.artifact !== undefined) line += ` · cut, full text: ${child.artifact}`;
  if (child.queuedTurns !== undefined && child.queuedTurns > 0) line += ` · ${child.queuedTurns} more turn${child.queuedTurns === 1 ? "" : "s"} queued`;
  return line;
}

/** The whole text: a heading with the counts, then as many lines as fit, then what did not. */
export function listChildren(children: readonly ChildLine[], forgotten: number, maxBytes = LIST_MAX_BYTES): string {
  if (children.length === 0 && forgotten === 0) return "No subagents in this session.";
  const counts = [countByState(children), forgotten > 0 ? `${forgotten} forgotten` : ""].filter((part) => part !== "").join(", ");
  const heading = `Subagents of this session: ${children.length + forgotten} (${counts}).`;
  const ranked = STATE_ORDER.flatMap((state) => children.filter((child) => child.state === state));
  const shown = new Set<ChildLine>();
  let used = bytes(heading);
  for (const [index, child] of ranked.entries()) {
    const line = childLine(child);
    const rest = ranked.length - index - 1;
    // Room for this line, and for the summary of the ones after it if any are left out.
    const reserve = rest > 0 ? 1 + bytes(notListed(ranked.slice(index + 1))) : 0;
    if (used + 1 + bytes(line) + reserve > maxBytes) break;
    shown.add(child);
    used += 1 + bytes(line);
  }
  const lines = [heading, ...children.filter((child) => shown.has(child)).map(childLine)];
  const left = ranked.filter((child) => !shown.has(child));
  if (left.length > 0) lines.push(notListed(left));
  return lines.join("\n");
}

function notListed(children: readonly ChildLine[]): string {
  return `${children.length} more not listed: ${countByState(children)}.`;
}

function countByState(children: readonly ChildLine[]): string {
  return STATE_ORDER.flatMap((state) => {
    const count = children.filter((child) => child.state === state).length;
    return count > 0 ? [`${count} ${state}`] : [];
  }).join(", ");
}

function bytes(text: string): number {
  return Buffer.byteLength(text, "utf8");
}
