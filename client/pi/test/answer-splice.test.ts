// Finding children's answers in a text pi-subagents wrote and putting projections in their place
// (src/answer-splice.ts); the real-Pi test (real-pi/pi-subagents.test.ts) runs it on a live workflow.
import assert from "node:assert/strict";
import { test } from "node:test";

import { locateAnswers, spliceAnswers } from "../src/answer-splice.js";

const child = (id: string, finalText: string): { id: string; finalText: string } => ({ id, finalText });

test("an answer found verbatim is replaced in place; the text around it and answers not in it are kept", () => {
  const a = child("a", "A1\nA2\nA3");
  const missing = child("b", "not in the text");
  const text = `Workflow completed.\n\nReturn:\nonly a:\n${a.finalText}\n\nConsole:\n[log] hi`;
  const located = locateAnswers(text, [a, missing]);
  assert.deepEqual(located.map((l) => l.child.id), ["a"]);
  assert.equal(spliceAnswers(text, located, () => "A1-A3"), "Workflow completed.\n\nReturn:\nonly a:\nA1-A3\n\nConsole:\n[log] hi");
});

test("an answer printed JSON-escaped (a workflow returning an array) gets its projection escaped the same way", () => {
  const a = child("a", 'line "one"\nline two\nline three');
  const text = `Return:\n${JSON.stringify([a.finalText], null, 2)}`;
  const located = locateAnswers(text, [a]);
  assert.equal(located[0]?.occurrences[0]?.form, "json");
  const spliced = spliceAnswers(text, located, () => 'line "one"\n[cut]');
  assert.equal(spliced, `Return:\n${JSON.stringify(['line "one"\n[cut]'], null, 2)}`);
});

test("occurrences never overlap (the longer answer claims first), every occurrence is replaced, nothing grows", () => {
  const long = child("long", "xxxx yyyy zzzz");
  const inner = child("inner", "yyyy");
  const empty = child("empty", "");
  const text = `${long.finalText} | ${inner.finalText} | ${long.finalText}`;
  const located = locateAnswers(text, [inner, long, empty]);
  assert.deepEqual(
    located.map((l) => [l.child.id, l.occurrences.map((o) => text.slice(o.start, o.end))]),
    [["long", [long.finalText, long.finalText]], ["inner", ["yyyy"]]],
  );
  assert.equal(spliceAnswers(text, located, (c) => (c.id === "long" ? "L" : "a projection longer than yyyy")), "L | yyyy | L");
  assert.equal(spliceAnswers(text, located, () => undefined), text);
});
