// subagent_spawn + subagent_wait in a real Pi: the parent model spawns a child Pi (the same
// scripted model; its requests start with "CHILD"), the child answers 171 KB, the parent waits,
// and the model's next request holds a bounded result (wait cap 16 KiB) with its first and last
// lines and the footer. An Esc during the wait loses nothing.
import assert from "node:assert/strict";
import { test } from "node:test";

import { eventually, packageRoot } from "../support/daemon.js";
import { unreadBytes } from "../support/real-pi.js";
import { textOf } from "../support/scripted-model.js";
import { deliveredBatches, exactReport, parentRequests, spawnedId, spawnedIdsSeen, scenarioPerTest, toolEnd, toolText } from "../support/subagent-scenario.js";

const { scenario, onCleanup } = scenarioPerTest();

test("spawn a child Pi, wait for its 171 KB answer: the model gets <= 16 KiB with first and last line and a footer", async () => {
  const report = exactReport(171_000, 3_000, "long");
  const s = await scenario((request) => {
    if (request.firstUser.startsWith("CHILD")) return { text: report };
    const last = request.last;
    if (last?.role === "user") return { toolCalls: [{ name: "subagent_spawn", arguments: { task: "CHILD write the long report", title: "Long report" } }] };
    if (last?.role === "tool" && textOf(last).includes("Started subagent")) return { toolCalls: [{ name: "subagent_wait", arguments: {} }] };
    // Cancelling the child whose result just came: nothing to cancel, and no error.
    if (last?.role === "tool" && textOf(last).includes('"Long report" finished'))
      return { toolCalls: [{ name: "subagent_cancel", arguments: { id: spawnedIdsSeen(request)[0] ?? "none" } }] };
    return { text: "read it" };
  }, { env: { HANDOFF_SUBAGENT_ARGS: `-ne -e ${packageRoot}` } });  // the child loads the package too
  await s.pi.prompt("PARENT please delegate");
  const waited = await toolEnd(s.pi, "subagent_wait", 60_000);
  await s.pi.waitFor((e) => e.type === "agent_settled", 20_000, "the parent to settle", s.pi.events.indexOf(waited));

  const requests = parentRequests(s.model, "PARENT");
  const afterWait = requests.find((request) => request.last?.role === "tool" && textOf(request.last).includes('"Long report" finished'));
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
  // The child Pi (which exits after its prompt, ending anything it spawned) is offered no subagent tools.
  const childTools = s.model.requests.filter((r) => r.firstUser.startsWith("CHILD")).flatMap((r) => (r.body.tools ?? []).map((t) => t.function.name));
  assert.ok(childTools.includes("read") && !childTools.some((name) => name.startsWith("subagent_")), `child tools: ${childTools.join(", ")}`);
  const running = s.pi.where((e) => e.type === "extension_ui_request" && e["statusKey"] === "handoff-subagents").map((e) => e["statusText"]);
  assert.ok(running.includes("subagents: 1 running"), `status line showed the running child: ${JSON.stringify(running)}`);
  assert.equal(running[running.length - 1], undefined, "the status line is cleared once delivered");
  const cancelled = await toolEnd(s.pi, "subagent_cancel", 20_000);
  assert.equal(cancelled["isError"], false);
  assert.equal(
    toolText(cancelled),
    `Subagent ${String(childId)}: already delivered; nothing to cancel. Its conversation is closed: subagent_send to it is refused from now.`,
  );
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

test("Esc the moment handoffd answers the wait: the answer reaches the model once (as the tool's result or a batch)", async () => {
  let release: (() => void) | undefined;
  const childMayAnswer = new Promise<void>((resolve) => (release = resolve));
  onCleanup(() => release?.());
  const answer = "BEGIN late\nanswered as the Esc came\nEND late";
  const s = await scenario(async (request) => {
    if (request.firstUser.startsWith("CHILD")) {
      await childMayAnswer;  // never, in this test: the result comes from outside
      return { text: "too late" };
    }
    const last = request.last;
    if (last?.role === "user" && textOf(last).startsWith("PARENT"))
      return { toolCalls: [{ name: "subagent_spawn", arguments: { task: "CHILD take your time", title: "Raced" } }] };
    if (last?.role === "tool" && textOf(last).includes("Started subagent")) return { toolCalls: [{ name: "subagent_wait", arguments: {} }] };
    return { text: "noted" };
  });
  await s.pi.prompt("PARENT delegate and wait");
  const childId = spawnedId(toolText(await toolEnd(s.pi, "subagent_spawn", 30_000)));
  await s.pi.waitFor((e) => e.type === "tool_execution_start" && e["toolName"] === "subagent_wait", 30_000, "the wait to start");
  await eventually("the wait asleep at handoffd", async () => (await s.worker.status()).waits === 1, 30_000);

  // Pi paused: the Esc goes into its stdin first, then handoffd answers the wait into its socket.
  // Resumed, Pi finds both ready; whichever it takes first, the answer must reach the model once.
  const daemonPid = s.daemon.pid ?? -1;
  await eventually("Pi to have read all handoffd sent it so far", () => unreadBytes(s.pi.pid, daemonPid) === 0 || undefined, 10_000);
  process.kill(s.pi.pid, "SIGSTOP");
  try {
    await s.pi.sendFlushed({ type: "abort", id: "esc" });  // in Pi's stdin before the answer
    await s.worker.completed({ parentId: s.sessionId, childId, status: "done", finalText: answer });
    // handoffd writes the wait's answer into Pi's socket after its status stops counting the wait:
    // the stopped Pi's receive queue shows it arrived.
    await eventually("the wait's answer in the stopped Pi's socket", () => unreadBytes(s.pi.pid, daemonPid) > 0 || undefined, 10_000);
  } finally {
    process.kill(s.pi.pid, "SIGCONT");
  }
  const waited = await toolEnd(s.pi, "subagent_wait", 10_000);
  const viaTool = toolText(waited).includes("answered as the Esc came");
  if (!viaTool) {
    assert.match(toolText(waited), /interrupted\. Nothing is lost/);
    const landed = await s.pi.waitFor(
      (e) => e.type === "message_end" && (e["message"] as { customType?: string }).customType === "handoff",
      30_000,
      "the late answer as a batch",
    );
    await s.pi.waitFor((e) => e.type === "agent_settled", 20_000, "the run the batch triggered", s.pi.events.indexOf(landed));
  } else {
    await s.pi.waitFor((e) => e.type === "agent_settled", 20_000, "the parent to settle", s.pi.events.indexOf(waited));
  }
  // Which way it went is logged; both are right, losing it is not.
  console.log(`# the answer reached the model ${viaTool ? "as subagent_wait's result" : "as a batch after the Esc"}`);
  const last = parentRequests(s.model, "PARENT").at(-1);
  const seen = (last?.body.messages ?? []).map(textOf).join("\n").split("answered as the Esc came").length - 1;
  assert.equal(seen, 1, "the model sees the answer exactly once");
  const { queue } = await s.worker.status();
  assert.equal(queue.results + queue.deliveries, 0);
});
