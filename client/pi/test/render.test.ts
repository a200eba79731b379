// The compact rendering of subagent results (render.ts): one line per child collapsed, the text
// when expanded. Drawn with Pi's own pi-tui components at a fixed width; colours are left out.
import assert from "node:assert/strict";
import { test } from "node:test";

import type { Theme } from "@earendil-works/pi-coding-agent";

import { batchMessageRenderer, formatBytes, renderBatch, sectionLine, summaryLines, type SectionSummary } from "../src/render.js";

const plain = { fg: (_colour: string, text: string) => text, bg: (_colour: string, text: string) => text } as unknown as Theme;

const cut: SectionSummary = {
  childId: "sa-1a2b3c",
  title: "Audit the parser",
  status: "done",
  truncated: true,
  totalBytes: 171_000,
  totalLines: 3_000,
  omitted: { offset: 120, limit: 2_760 },
  artifact: { saved: true, path: "/tmp/a/9f86.txt", sha256: "9f86" },
};
const failed: SectionSummary = {
  childId: "sa-4d5e6f",
  title: "Broken",
  status: "error",
  error: "the child Pi exited with code 1\nmore detail",
  truncated: false,
  totalBytes: 0,
  totalLines: 1,
  omitted: null,
  artifact: null,
};

test("sizes and one line per child: title, status, sizes, where the full text is, the error's first line", () => {
  assert.equal(formatBytes(512), "512 B");
  assert.equal(formatBytes(21_333), "20.8 KB");
  assert.equal(formatBytes(3 * 1024 * 1024), "3.0 MB");
  assert.equal(sectionLine(cut), '✓ sa-1a2b3c "Audit the parser" done · 167.0 KB, 3000 lines · cut, full text in /tmp/a/9f86.txt');
  assert.equal(sectionLine(failed), '✗ sa-4d5e6f "Broken" error · 0 B, 1 line · the child Pi exited with code 1');
  assert.deepEqual(summaryLines("Subagent results delivered", { sections: [cut, failed], deferred: 1, pending: ["sa-9"] }), [
    "Subagent results delivered: 2 results",
    `  ${sectionLine(cut)}`,
    `  ${sectionLine(failed)}`,
    "  1 more did not fit; they come in a later batch",
    "  still running: sa-9",
  ]);
});

test("a later turn of a child (subagent_send) shows as its id and title with the turn", () => {
  const turn2: SectionSummary = { ...cut, childId: "sa-1a2b3c.2", title: "Audit the parser (turn 2)", truncated: false, totalBytes: 19, totalLines: 1, omitted: null, artifact: null };
  assert.equal(sectionLine(turn2), '✓ sa-1a2b3c.2 "Audit the parser (turn 2)" done · 19 B, 1 line');
});

test("collapsed shows the summary only; expanded adds the text", () => {
  const text = "Subagent sa-1a2b3c \"Audit the parser\" finished.\n\nBEGIN\n...\nEND";
  const collapsed = renderBatch("subagent_wait", { sections: [cut], deferred: 0 }, text, false, plain).render(200).join("\n");
  assert.match(collapsed, /subagent_wait: 1 result/);
  assert.match(collapsed, /Audit the parser" done · 167\.0 KB/);
  assert.doesNotMatch(collapsed, /BEGIN/);
  const expanded = renderBatch("subagent_wait", { sections: [cut], deferred: 0 }, text, true, plain).render(200).join("\n");
  assert.match(expanded, /BEGIN/);
  assert.match(expanded, /END/);
});

test("the message renderer draws our batches and leaves other messages to Pi", () => {
  const options = { expanded: false, outputPad: 1 } as Parameters<typeof batchMessageRenderer>[1];
  const ours = { role: "custom", customType: "handoff", content: "body", display: true, details: { sections: [cut], deferred: 0 }, timestamp: 0 } as Parameters<typeof batchMessageRenderer>[0];
  const drawn = batchMessageRenderer(ours, options, plain)?.render(200).join("\n") ?? "";
  assert.match(drawn, /Subagent results delivered: 1 result/);
  const other = { ...ours, details: { unrelated: true } } as Parameters<typeof batchMessageRenderer>[0];
  assert.equal(batchMessageRenderer(other, options, plain), undefined);
});
