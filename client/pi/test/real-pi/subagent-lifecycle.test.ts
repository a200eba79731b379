// A child's life in a real Pi: subagent_cancel ends its whole process tree (its bash command
// included); a child that fails completes with status "error"; the concurrency limit queues
// spawns; no child outlives a parent Pi that is killed.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { test } from "node:test";

import { resolve } from "node:path";

import { eventually, packageRoot } from "../support/daemon.js";
import { alive } from "../support/real-pi.js";
import { textOf } from "../support/scripted-model.js";
import { processesWith, scenarioPerTest, spawnedIdsSeen, startScenario, toolEnd, toolText } from "../support/subagent-scenario.js";

const { scenario, onCleanup } = scenarioPerTest();

/** A child whose model runs `sleep 300` through Pi's bash tool (a process group of its own). */
function sleeperScript(marker: string) {
  return (request: Parameters<Parameters<typeof startScenario>[0]>[0]) => {
    if (request.firstUser.startsWith("CHILD")) {
      if (request.last?.role === "user") return { toolCalls: [{ name: "bash", arguments: { command: `sleep 300; echo ${marker}` } }] };
      return { text: "slept" };
    }
    const last = request.last;
    if (last?.role === "user" && textOf(last).startsWith("PARENT check")) {
      return { toolCalls: [{ name: "subagent_check", arguments: { id: spawnedIdsSeen(request)[0] ?? "none" } }] };
    }
    if (last?.role === "user" && textOf(last).startsWith("PARENT cancel")) {
      return { toolCalls: [{ name: "subagent_cancel", arguments: { id: spawnedIdsSeen(request)[0] ?? "none" } }] };
    }
    if (last?.role === "user") return { toolCalls: [{ name: "subagent_spawn", arguments: { task: `CHILD sleep ${marker}`, title: "Sleeper" } }] };
    return { text: "ok" };
  };
}

test("subagent_check previews the running child; subagent_cancel ends the child's whole process tree, its bash command included; the daemon records it cancelled", async () => {
  const marker = `handoff-sleeper-${randomBytes(4).toString("hex")}`;
  const s = await scenario(sleeperScript(marker));
  await s.pi.prompt("PARENT start a sleeper");
  const spawned = await toolEnd(s.pi, "subagent_spawn");
  const childId = /subagent (sa-[0-9a-f]+)/.exec(toolText(spawned))?.[1] ?? "";
  await eventually("the child's bash command to run", () => processesWith(`echo ${marker}`).length > 0, 30_000);
  const tree = processesWith(marker);
  assert.ok(tree.length >= 2, `the child Pi and its bash command run: ${tree.join(", ")}`);
  await s.pi.waitFor((e) => e.type === "agent_settled", 10_000, "the parent to settle");

  let from = s.pi.events.length;
  await s.pi.prompt("PARENT check the sleeper");
  const checked = await toolEnd(s.pi, "subagent_check", 20_000, from);
  const preview = toolText(checked);
  assert.match(preview, new RegExp(`^Subagent ${childId} "Sleeper": running\nLatest activity:\nrunning bash \{"command":"sleep 300; echo ${marker}"\}$`));
  await s.pi.waitFor((e) => e.type === "agent_settled", 10_000, "the parent to settle", from);

  from = s.pi.events.length;
  await s.pi.prompt("PARENT cancel the sleeper");
  const cancelled = await toolEnd(s.pi, "subagent_cancel", 20_000, from);
  assert.equal(cancelled["isError"], false, toolText(cancelled));
  assert.equal(toolText(cancelled), `Cancelled subagent ${childId}: its process tree was ended.`);
  await eventually("every process of the child's tree to be gone", () => processesWith(marker).length === 0, 10_000);
  const check = await s.worker.check({ parentId: s.sessionId, childId });
  assert.equal(check.state, "cancelled");
});

test("a killed parent Pi leaves no child behind", async () => {
  const marker = `handoff-orphan-${randomBytes(4).toString("hex")}`;
  const s = await scenario(sleeperScript(marker));
  await s.pi.prompt("PARENT start a sleeper");
  await eventually("the child's bash command to run", () => processesWith(`echo ${marker}`).length > 0, 30_000);
  // SIGKILL to the parent Pi alone (not its group): nothing of it gets to clean up.
  process.kill(s.pi.pid, "SIGKILL");
  await eventually("the child's tree to end with its parent", () => processesWith(marker).length === 0, 10_000);
});

test("a parent Pi that shuts down (the pi-subagents bridge loaded first) ends its children and handoffd records them cancelled", async () => {
  const marker = `handoff-shutdown-${randomBytes(4).toString("hex")}`;
  // The bridge first: its adapter's session_shutdown handler runs before the default extension's.
  const s = await scenario(sleeperScript(marker), { extensions: [resolve(packageRoot, "dist/src/pi-subagents-bridge.js"), packageRoot] });
  await s.pi.prompt("PARENT start a sleeper");
  const childId = /subagent (sa-[0-9a-f]+)/.exec(toolText(await toolEnd(s.pi, "subagent_spawn")))?.[1] ?? "";
  await eventually("the child's bash command to run", () => processesWith(`echo ${marker}`).length > 0, 30_000);
  s.pi.endInput();
  await eventually("the parent Pi to exit", () => !alive(s.pi.pid) || undefined, 20_000);
  await eventually("the child's tree to end", () => processesWith(marker).length === 0, 10_000);
  assert.equal((await s.worker.check({ parentId: s.sessionId, childId })).state, "cancelled");
});

test("a failing child completes with status error; past the limit spawns queue and say so; a model Pi does not know is refused at spawn, a custom id on a known provider runs", async () => {
  let firstChildRunning = false;
  let secondStartedWhileFirstRan: boolean | undefined;
  let customModelId: string | undefined;
  const s = await scenario(
    async (request) => {
      if (request.firstUser.startsWith("CHILD one")) {
        firstChildRunning = true;
        await new Promise((done) => setTimeout(done, 1_000));  // a slow child on purpose: two spawns overlap it
        firstChildRunning = false;
        return { text: "first done" };
      }
      if (request.firstUser.startsWith("CHILD two")) {
        secondStartedWhileFirstRan ??= firstChildRunning;
        return { text: "second done" };
      }
      if (request.firstUser.startsWith("CHILD six")) {
        customModelId = request.body.model;
        return { text: "custom id done" };
      }
      const last = request.last;
      if (last?.role === "user")
        return {
          toolCalls: [
            { name: "subagent_spawn", arguments: { task: "CHILD one", title: "One" } },
            { name: "subagent_spawn", arguments: { task: "CHILD two", title: "Two" } },
            // A model Pi knows, on a provider with no credentials here: the child Pi exits with code 1.
            { name: "subagent_spawn", arguments: { task: "CHILD three", title: "Broken", model: "openai/gpt-4o" } },
            { name: "subagent_spawn", arguments: { task: "CHILD four", title: "Unknown model", model: "scripted-modle" } },
            { name: "subagent_spawn", arguments: { task: "CHILD five", title: "Unknown provider", model: "nowhere/x" } },
            // A known provider, an id its registry lacks: Pi runs it as a custom model id, and so do we.
            { name: "subagent_spawn", arguments: { task: "CHILD six", title: "Custom id", model: "scripted/brand-new-model" } },
          ],
        };
      if (last?.role === "tool" && !textOf(last).includes("finished") && !textOf(last).includes("failed"))
        return { toolCalls: [{ name: "subagent_wait", arguments: {} }] };
      return { text: "all in" };
    },
    { env: { HANDOFF_SUBAGENT_MAX_RUNNING: "1" } },
  );
  await s.pi.prompt("PARENT spawn three");
  const waited = await toolEnd(s.pi, "subagent_wait", 60_000);
  const spawns = s.pi.where((e) => e.type === "tool_execution_end" && e["toolName"] === "subagent_spawn" && e["isError"] === false).map(toolText);
  assert.match(spawns[0] ?? "", /^Started subagent sa-[0-9a-f]+ "One"\./);
  assert.match(spawns[1] ?? "", /^Queued subagent sa-[0-9a-f]+ "Two": the limit of running subagents is reached; it starts when one finishes \(position 1 in the queue\)/);
  assert.match(spawns[2] ?? "", /^Queued subagent sa-[0-9a-f]+ "Broken".*position 2 in the queue/);
  assert.match(
    spawns[3] ?? "",
    /^Queued subagent sa-[0-9a-f]+ "Custom id".*position 3 in the queue.* Pi's model registry has no model "brand-new-model" for provider "scripted": the child runs it as a custom model id, as `pi --model scripted\/brand-new-model` does/s,
  );
  const refused = s.pi.where((e) => e.type === "tool_execution_end" && e["toolName"] === "subagent_spawn" && e["isError"] === true).map(toolText);
  assert.equal(refused.length, 2, spawns.join("\n"));
  assert.match(refused[0] ?? "", /no model "scripted-modle"; close matches: scripted\/.*pi --list-models/);
  assert.match(refused[1] ?? "", /Pi knows no provider "nowhere".*pi --list-models/);
  assert.equal(secondStartedWhileFirstRan, false, "the queued child started only after the running one ended");

  const text = toolText(waited);
  assert.match(text, /"One" finished\.\n\nfirst done/);
  assert.match(text, /"Two" finished\.\n\nsecond done/);
  assert.match(text, /"Broken" failed\.\nError: the child Pi exited with code 1; stderr: No API key found for openai/s);
  assert.match(text, /"Custom id" finished\.\n\ncustom id done/);
  assert.equal(customModelId, "brand-new-model", "the child Pi asked the provider for the custom id");
  const sections = (waited["result"] as { details: { sections: { title: string; status: string }[] } }).details.sections;
  assert.deepEqual(sections.map((x) => [x.title, x.status]).sort(), [["Broken", "error"], ["Custom id", "done"], ["One", "done"], ["Two", "done"]]);
});

test("a child past its time limit is killed, tree and all, and completes with status error", async () => {
  const marker = `handoff-slow-${randomBytes(4).toString("hex")}`;
  const sleeper = sleeperScript(marker);
  const s = await scenario(
    (request) => {
      if (!request.firstUser.startsWith("CHILD") && request.last?.role === "tool" && textOf(request.last).includes("Started subagent"))
        return { toolCalls: [{ name: "subagent_wait", arguments: {} }] };
      return sleeper(request);
    },
    { env: { HANDOFF_SUBAGENT_TIMEOUT_MS: "3000" } },
  );
  await s.pi.prompt("PARENT start a sleeper");
  const waited = await toolEnd(s.pi, "subagent_wait", 30_000);
  assert.match(toolText(waited), /"Sleeper" failed\.\nError: the child Pi passed its time limit of 3000 ms and was killed/);
  await eventually("every process of the child's tree to be gone", () => processesWith(marker).length === 0, 10_000);
});

test("a child Pi that crashes (killed by a signal) completes with status error", async () => {
  const s = await scenario((request) => {
    if (request.firstUser.startsWith("CHILD")) {
      // The child's bash command kills the child Pi itself: a crash, not a clean exit.
      if (request.last?.role === "user") return { toolCalls: [{ name: "bash", arguments: { command: "kill -9 $PPID" } }] };
      return { text: "unreachable" };
    }
    if (request.last?.role === "user") return { toolCalls: [{ name: "subagent_spawn", arguments: { task: "CHILD crash", title: "Crash" } }] };
    if (request.last?.role === "tool" && textOf(request.last).includes("Started subagent")) return { toolCalls: [{ name: "subagent_wait", arguments: {} }] };
    return { text: "ok" };
  });
  await s.pi.prompt("PARENT start a crashing child");
  const waited = await toolEnd(s.pi, "subagent_wait", 30_000);
  assert.match(toolText(waited), /"Crash" failed\.\nError: the child Pi was killed by SIGKILL/);
});
