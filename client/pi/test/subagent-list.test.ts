// subagent_list's text (subagent-list.ts): one line per child, every state named, never over
// 2 KiB; what does not fit is counted by state, the children that still matter listed first.
import assert from "node:assert/strict";
import { test } from "node:test";

import { childLine, LIST_MAX_BYTES, listChildren, type ChildLine } from "../src/subagent-list.js";

const artifact = `/home/someone/.pi/agent/cache/openpi/subagent-results/${"9f86d081".repeat(8)}.txt`;

test("a line: id, title, state, turn, sizes, the artifact of a cut result, turns queued behind", () => {
  assert.equal(
    childLine({ id: "sa-1a2b3c", title: "Audit the parser", state: "delivered", turn: 2, bytes: 171_000, lines: 3_000, artifact }),
    `sa-1a2b3c "Audit the parser" delivered · turn 2 · 167.0 KB, 3000 lines · cut, full text: ${artifact}`,
  );
  assert.equal(childLine({ id: "sa-1", title: "Run", state: "running", turn: 1, queuedTurns: 2 }), `sa-1 "Run" running · turn 1 · 2 more turns queued`);
  assert.equal(childLine({ id: "sa-2", title: "Broken", state: "completed", turn: 1, bytes: 0, lines: 1, error: true }), `sa-2 "Broken" completed (error) · turn 1 · 0 B, 1 line`);
  assert.equal(childLine({ id: "sa-3", title: "x".repeat(100), state: "queued", turn: 1 }), `sa-3 "${"x".repeat(39)}…" queued · turn 1`);
});

test("no children; only forgotten ones", () => {
  assert.equal(listChildren([], 0), "No subagents in this session.");
  assert.equal(listChildren([], 3), "Subagents of this session: 3 (3 forgotten).");
});

test("200 children with long titles and artifacts: at most 2 KiB, the live ones listed first, the rest counted by state", () => {
  const states = ["delivered", "cancelled", "completed", "running", "queued"] as const;
  const children: ChildLine[] = Array.from({ length: 200 }, (_, index) => ({
    id: `sa-${index.toString(16).padStart(6, "0")}`,
    title: `Child number ${index} with a title long enough to be clipped`,
    state: states[index % states.length] as ChildLine["state"],
    turn: 1 + (index % 3),
    bytes: 40_000 + index,
    lines: 800,
    artifact,
  }));
  const text = listChildren(children, 7);
  assert.ok(Buffer.byteLength(text) <= LIST_MAX_BYTES, `${Buffer.byteLength(text)} B`);
  const lines = text.split("\n");
  assert.equal(lines[0], "Subagents of this session: 207 (40 running, 40 queued, 40 completed, 40 delivered, 40 cancelled, 7 forgotten).");
  const listed = lines.slice(1, -1);
  assert.ok(listed.length >= 4, text);
  assert.ok(listed.every((line) => / running · /.test(line)), "running children come first");
  assert.equal(lines.at(-1), `${200 - listed.length} more not listed: ${40 - listed.length} running, 40 queued, 40 completed, 40 delivered, 40 cancelled.`);
  // Adding the next line would have passed the cap.
  assert.ok(Buffer.byteLength(text) + 1 + Buffer.byteLength(listed[0] as string) > LIST_MAX_BYTES);
});

test("ten children of every state fit whole, in spawn order", () => {
  const children: ChildLine[] = ["queued", "running", "completed", "delivered", "cancelled"].flatMap((state, index) => [
    { id: `sa-00000${index}`, title: `${state} one`, state: state as ChildLine["state"], turn: 1 },
    { id: `sa-10000${index}`, title: `${state} two`, state: state as ChildLine["state"], turn: 2, bytes: 100, lines: 3, artifact },
  ]);
  const text = listChildren(children, 0);
  const lines = text.split("\n");
  assert.equal(lines.length, 11, text);
  assert.deepEqual(lines.slice(1).map((line) => line.split(" ")[0]), children.map((child) => child.id));
});
