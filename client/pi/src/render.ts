// How subagent results look in Pi's terminal: one line per child (title, status, sizes), the full
// text only when the user expands the entry. The same summary serves a delivered batch (a custom
// message of the package's customType) and a `subagent_wait` result.
//
// The line builders are plain functions of the batch's details (tested without a terminal);
// `renderBatch` wraps them in pi-tui components.
import type { MessageRenderer, Theme } from "@earendil-works/pi-coding-agent";
import { Box, Text, type Component } from "@earendil-works/pi-tui";

import type { Section } from "./protocol.js";

/** A section without its text: what `details` carries. */
export type SectionSummary = Omit<Section, "text">;

export interface BatchSummary {
  sections: SectionSummary[];
  /** Results left for later (did not fit). */
  deferred: number;
  /** Children still running (a wait that timed out). */
  pending?: string[];
}

const STATUS_MARK: Record<Section["status"], string> = { done: "✓", error: "✗", cancelled: "⊘" };

/** "512 B", "20.8 KB", "1.4 MB" (1 KB = 1024 B). */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

/** One child: `✓ sa-1a2b "Audit the parser" done · 171.0 KB, 3422 lines · cut, full text in <path>`. */
export function sectionLine(section: SectionSummary): string {
  const size = `${formatBytes(section.totalBytes)}, ${section.totalLines} line${section.totalLines === 1 ? "" : "s"}`;
  let line = `${STATUS_MARK[section.status]} ${section.childId} ${JSON.stringify(section.title)} ${section.status} · ${size}`;
  if (section.truncated) line += section.artifact?.saved === true ? ` · cut, full text in ${section.artifact.path ?? "?"}` : " · cut";
  if (section.error !== undefined && section.error !== "") line += ` · ${firstLine(section.error)}`;
  return line;
}

/** The collapsed view: a heading and one line per child. */
export function summaryLines(heading: string, batch: BatchSummary): string[] {
  const lines = [`${heading}: ${batch.sections.length} result${batch.sections.length === 1 ? "" : "s"}`];
  for (const section of batch.sections) lines.push(`  ${sectionLine(section)}`);
  if (batch.deferred > 0) lines.push(`  ${batch.deferred} more did not fit; they come in a later batch`);
  if (batch.pending !== undefined && batch.pending.length > 0) lines.push(`  still running: ${batch.pending.join(", ")}`);
  return lines;
}

/** The component for a batch: summary lines, plus the text when expanded. */
export function renderBatch(heading: string, batch: BatchSummary, text: string, expanded: boolean, theme: Theme, padding = 0): Component {
  const [first, ...rest] = summaryLines(heading, batch);
  let shown = [theme.fg("accent", first ?? heading), ...rest.map((line) => lineColour(line, theme))].join("\n");
  if (expanded) shown += `\n\n${text}`;
  else shown += `\n${theme.fg("dim", "  (expand to read the text)")}`;
  const box = new Box(padding, 1, (t) => theme.bg("customMessageBg", t));
  box.addChild(new Text(shown, 0, 0));
  return box;
}

/** The renderer of delivered batches (custom messages whose details are a batch summary). */
export const batchMessageRenderer: MessageRenderer = (message, options, theme) => {
  const details = message.details as Partial<BatchSummary> | undefined;
  if (details === undefined || !Array.isArray(details.sections)) return undefined;  // not ours: Pi's default
  const text = typeof message.content === "string" ? message.content : message.content.map((part) => (part.type === "text" ? part.text : "")).join("\n");
  return renderBatch("Subagent results delivered", { sections: details.sections, deferred: details.deferred ?? 0 }, text, options.expanded, theme, options.outputPad);
};

function lineColour(line: string, theme: Theme): string {
  if (line.includes("✗")) return theme.fg("error", line);
  if (line.includes("⊘")) return theme.fg("warning", line);
  if (line.includes("✓")) return theme.fg("success", line);
  return theme.fg("dim", line);
}

function firstLine(text: string): string {
  const line = text.split("\n", 1)[0] ?? "";
  return line.length <= 120 ? line : `${line.slice(0, 119)}…`;
}
