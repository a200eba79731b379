// subagent_spawn + subagent_wait in a real Pi: the parent model spawns a child Pi (the same
// scripted model; its requests start with "CHILD"), the child answers 171 KB, the parent waits,
// and the model's next request holds a bounded result (wait cap 16 KiB) with its first and last
// lines and the footer. An Esc during the wait loses nothing.
import assert from "node:assert/strict";
import { test } from "node:test";

import { textOf } from "../support/scripted-model.js";
import { deliveredBatches, exactReport, parentRequests, spawnedIdsSeen, scenarioPerTest, toolEnd, toolText } from "../support/subagent-scenario.js";

const { scenario, onCleanup } = scenarioPerTest();

test("spawn a child Pi, wait for its 171 KB answer: the model gets <= 16 KiB with first and last line and a footer", async () => {
  const report = exactReport(171_000, 3_000, "long");
  const s = await scenario((request) => {
    if (request.firstUser.startsWith("CHILD")) return { text: report };
    const last = request.last;
    if (last?.role === "user") return { toolCalls: [{ name: "subagent_spawn", arguments: { task: "CHILD write the long report", title: "Long report" } }] };
    if (last?.role === "tool" && textOf(last).includes("Started subagent")) return { toolCalls: [{ name: "subagent_wait", arguments: {} }] };
    return { text: "read it" };
  });
  await s.pi.prompt("PARENT please delegate");
  const waited = await toolEnd(s.pi, "subagent_wait", 60_000);
  await s.pi.waitFor((e) => e.type === "agent_settled", 20_000, "the parent to settle", s.pi.events.indexOf(waited));

  const requests = parentRequests(s.model, "PARENT");
  const afterWait = requests[requests.length - 1];
  assert.ok(afterWait !== undefined);
  assert.equal(afterWait.last?.role, "tool", "the model's last request follows the wait's result");
  const seen = textOf(afterWait.last);
  assert.ok(Buffer.byteLength(seen) <= 16 * 1024, `wait result ${Buffer.byteLength(seen)} B within 16 KiB`);
  const [childId] = spawnedIdsSeen(afterWait);
  assert.ok(seen.startsWith(`Subagent ${String(childId)} "Long report" finished.\n\nBEGIN long\n`), seen.slice(0, 200));
  assert.match(seen, /\nEND long\n/);
  assert.match(seen, /\[\.\.\. middle omitted: /);
  assert.match(seen, /\[Truncated: /);
  assert.equal(toolText(waited), seen, "the tool result is what the model saw");
  // The child's final answer reached the daemon byte for byte: its size and line count.
  const details = (waited["result"] as { details: { sections: { totalBytes: number; totalLines: number; status: string }[] } }).details;
  assert.deepEqual(details.sections.map((x) => [x.status, x.totalBytes, x.totalLines]), [["done", 171_000, 3_000]]);
  // Consumed by the wait: nothing is auto-delivered afterwards.
  assert.equal(deliveredBatches(s.pi).length, 0);
  const running = s.pi.where((e) => e.type === "extension_ui_request" && e["statusKey"] === "handoff-subagents").map((e) => e["statusText"]);
  assert.ok(running.includes("subagents: 1 running"), `status line showed the running child: ${JSON.stringify(running)}`);
  assert.equal(running[running.length - 1], undefined, "the status line is cleared once delivered");
});

test("Esc during subagent_wait ends it at once and loses nothing: the result is auto-delivered once Pi is idle", async () => {
  let release: (() => void) | undefined;
  const childMayAnswer = new Promise<void>((resolve) => (release = resolve));
  const s = await scenario(async (request) => {
    if (request.firstUser.startsWith("CHILD")) {
      await childMayAnswer;
      return { text: "BEGIN slow\nthe slow child's answer\nEND slow" };
    }
    const last = request.last;
    if (last?.role === "user") return { toolCalls: [{ name: "subagent_spawn", arguments: { task: "CHILD take your time", title: "Slow" } }] };
    if (last?.role === "tool" && textOf(last).includes("Started subagent")) return { toolCalls: [{ name: "subagent_wait", arguments: {} }] };
    return { text: "noted" };
  });
  await s.pi.prompt("PARENT delegate and wait");
  await s.pi.waitFor((e) => e.type === "tool_execution_start" && e["toolName"] === "subagent_wait", 30_000, "the wait to start");
  await s.pi.abort();
  const aborted = await toolEnd(s.pi, "subagent_wait", 5_000);
  assert.equal(aborted["isError"], true);
  assert.match(toolText(aborted), /interrupted\. Nothing is lost/);
  await s.pi.waitFor((e) => e.type === "agent_settled", 10_000, "the aborted run to settle");
  assert.equal(deliveredBatches(s.pi).length, 0, "nothing yet: the child is still running");

  release?.();
  const landed = await s.pi.waitFor(
    (e) => e.type === "message_end" && (e["message"] as { customType?: string }).customType === "handoff",
    30_000,
    "the auto-delivery",
  );
  const batch = deliveredBatches(s.pi)[0];
  assert.ok(batch !== undefined && batch.index === s.pi.events.indexOf(landed));
  assert.match(batch.text, /BEGIN slow\nthe slow child's answer\nEND slow/);
  // The delivery starts a turn: the model reads it.
  await s.pi.waitFor((e) => e.type === "agent_settled", 20_000, "the triggered run", batch.index);
  const last = parentRequests(s.model, "PARENT").at(-1);
  assert.ok(last?.body.messages.map(textOf).some((text) => text.includes("the slow child's answer")));
  await s.worker.ready();
  const { queue } = await s.worker.status();
  assert.equal(queue.results + queue.deliveries, 0, "delivered and acknowledged");
});
