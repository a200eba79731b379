// Reading pi-subagents' results (src/pi-subagents-results.ts) on the shapes pi-subagents 0.67.0
// produces; the real-Pi test (real-pi/pi-subagents.test.ts) runs them on its live output.
import assert from "node:assert/strict";
import { test } from "node:test";

import { asyncCompletion, foregroundChildren, hasNonText, splitNotify, textOf } from "../src/pi-subagents-results.js";

test("foreground children: one per result with an answer, ids distinct even when workflow indexes repeat", () => {
  const details = {
    mode: "workflow",
    results: [
      { index: 0, agent: "delegate", workflowKey: "k1", exitCode: 0, finalOutput: "one" },
      { index: 0, agent: "delegate", workflowKey: "k2", exitCode: 1, error: "boom", finalOutput: "two" },
      { index: 0, agent: "scout", exitCode: 0, messages: [{ role: "assistant", content: [{ type: "text", text: "old" }] }, { role: "user", content: "x" }, { role: "assistant", content: [{ type: "text", text: "three" }] }] },
      { index: 0, agent: "delegate", exitCode: 0 },
    ],
  };
  assert.deepEqual(foregroundChildren("call_7", details), [
    { childId: "call_7/0", title: "delegate k1", status: "done", finalText: "one" },
    { childId: "call_7/1", title: "delegate k2", status: "error", error: "boom", finalText: "two" },
    { childId: "call_7/2", title: "scout", status: "done", finalText: "three" },
  ]);
  assert.equal(foregroundChildren("c", { results: [{ agent: "a", exitCode: 2, finalOutput: "" }] })[0]?.error, "exit code 2");
  assert.deepEqual(foregroundChildren("c", { mode: "management", results: [] }), []);
  assert.deepEqual(foregroundChildren("c", undefined), []);
});

test("a notice splits after the line its renderer parses (and a workflow receipt line)", () => {
  assert.deepEqual(splitNotify("Background task completed: **delegate**\n\ndelegate:\nBEGIN\n\nSession file: /s"), {
    header: "Background task completed: **delegate**",
    body: "delegate:\nBEGIN\n\nSession file: /s",
  });
  assert.deepEqual(splitNotify("Background task failed: **w**\nWorkflow receipt: /r.json\n\nbody"), {
    header: "Background task failed: **w**\nWorkflow receipt: /r.json",
    body: "body",
  });
  assert.equal(splitNotify("Background tasks completed (2): **a**, **b**\n\n1. a")?.body, "1. a");
  assert.equal(splitNotify("something else\n\nbody"), undefined);
  assert.equal(splitNotify("Background task completed: **a**\nno blank line"), undefined);
});

test("content text and async-complete payloads", () => {
  assert.equal(textOf([{ type: "text", text: "a" }, { type: "text", text: "b" }]), "a\nb");
  assert.equal(textOf("plain"), "plain");
  assert.equal(hasNonText([{ type: "text", text: "a" }, { type: "image", data: "", mimeType: "image/png" }]), true);
  assert.equal(hasNonText("plain"), false);
  assert.deepEqual(asyncCompletion({ id: "r1", agent: "delegate", success: true, summary: "delegate:\nok" }), {
    runId: "r1",
    agent: "delegate",
    success: true,
    summary: "delegate:\nok",
  });
  assert.equal(asyncCompletion({ id: "r1" }), undefined);
});
