// subagent_send in a real Pi 1.6.0: a child's next turn continues its own Pi session (kept 0600
// in a 0700 directory, removed once the child is forgotten); a send to a running child waits for
// its turn; a send to a cancelled, forgotten or unknown child is refused; a send survives a
// handoffd restart; subagent_list names every child's state within 2 KiB.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";

import { eventually } from "../support/daemon.js";
import { textOf, type ChatMessage, type ModelRequest } from "../support/scripted-model.js";
import { deliveredBatches, exactReport, nothingLeftToDeliver, processesWith, scenarioPerTest, spawnedId, toolEnd, toolText, type Scenario } from "../support/subagent-scenario.js";

const { scenario, onCleanup } = scenarioPerTest();

/** A private XDG_RUNTIME_DIR for the parent Pi, so the test finds (and owns) the children's sessions. */
function runtimeDir(): { dir: string; env: Record<string, string> } {
  const dir = join(process.env["TMPDIR"] ?? "/tmp", `handoff-rt-${randomBytes(4).toString("hex")}`);
  mkdirSync(dir, { mode: 0o700 });
  onCleanup(() => rmSync(dir, { recursive: true, force: true }));
  return { dir, env: { XDG_RUNTIME_DIR: dir } };
}

/** The directory of a child's session under the runtime directory, if it exists. */
function sessionDirOf(runtime: string, childId: string): string | undefined {
  const root = join(runtime, "handoff", "pi-sessions");
  if (!existsSync(root)) return undefined;
  for (const parent of readdirSync(root)) {
    const dir = join(root, parent, childId);
    if (existsSync(dir)) return dir;
  }
  return undefined;
}

function mode(path: string): string {
  return (statSync(path).mode & 0o777).toString(8);
}

/** The tool results the model read, by tool call (the parent's last request's history). */
function toolCallsIn(request: ModelRequest, name: string): number {
  return request.body.messages.flatMap((message: ChatMessage) => message.tool_calls ?? []).filter((call) => call.function.name === name).length;
}

test("subagent_send continues the child's own conversation: its second request carries its first prompt, its read and its answer; the second answer comes bounded as turn 2; the session is 0600 in a 0700 directory and gone once the child is forgotten", async () => {
  const runtime = runtimeDir();
  const fileMarker = `contents-${randomBytes(4).toString("hex")}`;
  const first = exactReport(60_000, 1_200, "T1");
  const second = exactReport(60_000, 1_200, "T2");
  let childId = "";
  let secondTurnHistory: string[] | undefined;
  let reads = 0;
  const s = await scenario(
    (request) => {
      if (request.firstUser.startsWith("CHILD audit")) {
        const last = request.last;
        if (last?.role === "user" && textOf(last).startsWith("CHILD audit")) {
          reads += 1;
          return { toolCalls: [{ name: "read", arguments: { path: "notes.txt" } }] };
        }
        if (last?.role === "user" && textOf(last).startsWith("FOLLOW-UP")) {
          secondTurnHistory = request.body.messages.map((message) => `${message.role}: ${textOf(message)}`);
          // A model that did not see its first turn would have to read the file again.
          if (!request.body.messages.some((message) => message.role === "tool" && textOf(message).includes(fileMarker))) {
            reads += 1;
            return { toolCalls: [{ name: "read", arguments: { path: "notes.txt" } }] };
          }
          return { text: second };
        }
        if (last?.role === "tool") return { text: secondTurnHistory === undefined ? first : second };
        return { text: "unexpected" };
      }
      const last = request.last;
      const lastText = textOf(last);
      if (last?.role === "user" && lastText.startsWith("PARENT start"))
        return { toolCalls: [{ name: "subagent_spawn", arguments: { task: "CHILD audit the notes", title: "Audit" } }] };
      if (last?.role === "tool" && lastText.startsWith("Started subagent")) return { toolCalls: [{ name: "subagent_wait", arguments: { ids: [spawnedId(lastText)] } }] };
      if (last?.role === "tool" && lastText.includes("END T1") && !lastText.includes("END T2"))
        return { toolCalls: [{ name: "subagent_send", arguments: { id: childId, message: "FOLLOW-UP now fix what you found" } }] };
      if (last?.role === "tool" && lastText.startsWith("Sent to subagent")) return { toolCalls: [{ name: "subagent_wait", arguments: { ids: [childId] } }] };
      if (last?.role === "user" && lastText.startsWith("PARENT again"))
        return { toolCalls: [{ name: "subagent_send", arguments: { id: `${childId}.2`, message: "FOLLOW-UP once more" } }, { name: "subagent_list", arguments: {} }] };
      return { text: "done" };
    },
    { env: { ...runtime.env, HANDOFF_SUBAGENT_KEEP_MS: "10000" }, prepare: ({ cwd }) => void writeFileSync(join(cwd, "notes.txt"), `${fileMarker}\n`) },
  );
  const from = s.pi.events.length;
  await s.pi.prompt("PARENT start an audit");
  childId = spawnedId(toolText(await toolEnd(s.pi, "subagent_spawn", 30_000, from)));
  const firstWait = await toolEnd(s.pi, "subagent_wait", 60_000, from);
  const sessionDir = sessionDirOf(runtime.dir, childId);
  assert.ok(sessionDir !== undefined, "the child's session directory exists");
  const sessionFile = join(sessionDir, "session.jsonl");
  assert.equal(mode(sessionDir), "700");
  assert.equal(mode(sessionFile), "600", "the session file Pi wrote keeps the mode it was created with");

  const sent = await toolEnd(s.pi, "subagent_send", 30_000, from);
  assert.equal(sent["isError"], false, toolText(sent));
  assert.equal(
    toolText(sent),
    `Sent to subagent ${childId} "Audit": turn 2 started. Its answer comes as ${childId}.2 "Audit (turn 2)", delivered to you when you are idle; call subagent_wait to wait for it now.`,
  );
  const secondWait = await toolEnd(s.pi, "subagent_wait", 60_000, s.pi.events.indexOf(sent));
  await s.pi.waitFor((e) => e.type === "agent_settled", 20_000, "the parent to settle", s.pi.events.indexOf(secondWait));

  // The child's second turn saw its first: the task, the read's result and its full answer.
  assert.ok(secondTurnHistory !== undefined, `the child's second turn asked the model; the parent's tool results: ${JSON.stringify(s.pi.where((e) => e.type === "tool_execution_end").map((e) => toolText(e).slice(0, 300)))}`);
  const history = secondTurnHistory.join("\n");
  assert.match(history, /^user: CHILD audit the notes$/m);
  assert.ok(history.includes(fileMarker), "the first turn's read result is in the second turn's request");
  assert.ok(history.includes(first), "the first answer, whole, is in the second turn's request");
  assert.match(secondTurnHistory.at(-1) ?? "", /^user: FOLLOW-UP now fix what you found$/);
  assert.equal(reads, 1, "the file was read once, in the first turn only");
  const childRequests = s.model.requestsWhere((r) => r.firstUser.startsWith("CHILD audit"));
  assert.equal(childRequests.length, 3, "turn 1: read + answer; turn 2: the answer");
  assert.equal(toolCallsIn(childRequests[2] as ModelRequest, "read"), 1, "turn 2 carries turn 1's read call, and no other");

  // Both answers bounded the same way; the second is named as turn 2 of the same child.
  const sections = (e: typeof firstWait) => (e["result"] as { details: { sections: { childId: string; title: string; truncated: boolean }[] } }).details.sections;
  assert.deepEqual(sections(firstWait).map((x) => [x.childId, x.title, x.truncated]), [[childId, "Audit", true]]);
  assert.deepEqual(sections(secondWait).map((x) => [x.childId, x.title, x.truncated]), [[`${childId}.2`, "Audit (turn 2)", true]]);
  for (const [wait, tag] of [[firstWait, "T1"], [secondWait, "T2"]] as const) {
    const text = toolText(wait);
    assert.ok(Buffer.byteLength(text) <= 16 * 1024, `${tag}: ${Buffer.byteLength(text)} B`);
    assert.match(text, new RegExp(`BEGIN ${tag}[\\s\\S]*END ${tag}`));
  }
  assert.match(toolText(secondWait), new RegExp(`^Subagent ${childId}\\.2 "Audit \\(turn 2\\)" finished\\.`));
  // The parent paid for its send's message only: the task went to the model once, in the spawn.
  const parentLast = s.model.requestsWhere((r) => r.firstUser.startsWith("PARENT")).at(-1) as ModelRequest;
  assert.equal(JSON.stringify(parentLast.body.messages).split("CHILD audit the notes").length - 1, 1, "the task is in the parent's context once: its spawn call");

  const lines = readFileSync(sessionFile, "utf8").trim().split("\n").map((line) => JSON.parse(line) as { type: string; message?: { role?: string } });
  assert.equal(lines.filter((entry) => entry.type === "message" && entry.message?.role === "user").length, 2, "both prompts are in the child's session");
  for (const name of readdirSync(sessionDir)) assert.equal(mode(join(sessionDir, name)), "600", name);

  // Forgotten 10 s after its last result was delivered: the files go, a send is refused and says why.
  await eventually("the child's session directory to be removed", () => !existsSync(sessionDir), 30_000);
  const again = s.pi.events.length;
  await s.pi.prompt("PARENT again");
  const refused = await toolEnd(s.pi, "subagent_send", 30_000, again);
  assert.equal(refused["isError"], true);
  assert.match(toolText(refused), new RegExp(`^subagent_send: subagent ${childId} was forgotten: a conversation is kept 10 s after its last result was delivered\\.`));
  const listed = await toolEnd(s.pi, "subagent_list", 30_000, again);
  assert.equal(toolText(listed), "Subagents of this session: 1 (1 forgotten).");

  // The session's own directory goes when Pi shuts down.
  const root = join(runtime.dir, "handoff", "pi-sessions");
  assert.equal(readdirSync(root).length, 1, "the parent's directory is there while it runs");
  assert.equal(mode(join(root, readdirSync(root)[0] as string)), "700");
  s.pi.endInput();
  await eventually("the parent's session directory to be removed at shutdown", () => readdirSync(root).length === 0, 20_000);
});

test("a send to a running child is answered when its turn ends; a send after cancel, or to an id never spawned, is refused and says which", async () => {
  const marker = `handoff-send-${randomBytes(4).toString("hex")}`;
  let releaseFirst: (() => void) | undefined;
  const firstHeld = new Promise<void>((done) => (releaseFirst = done));
  let firstAnsweredAt = 0;
  let secondAskedAt = 0;
  let secondSawFirst = false;
  let thirdSawSecond = false;
  let slowId = "";
  let sleeperId = "";
  const s = await scenario(async (request) => {
    if (request.firstUser.startsWith("CHILD slow")) {
      if (request.last?.role === "user" && textOf(request.last).startsWith("CHILD slow")) {
        await firstHeld;
        firstAnsweredAt = Date.now();
        return { text: "BEGIN first\nthe first answer\nEND first" };
      }
      if (textOf(request.last).startsWith("FOLLOW-UP two")) {
        thirdSawSecond = request.body.messages.some((message) => message.role === "assistant" && textOf(message).includes("the second answer"));
        return { text: "BEGIN third\nthe third answer\nEND third" };
      }
      secondAskedAt = Date.now();
      secondSawFirst = request.body.messages.some((message) => message.role === "assistant" && textOf(message).includes("the first answer"));
      return { text: "BEGIN second\nthe second answer\nEND second" };
    }
    if (request.firstUser.startsWith("CHILD sleep")) {
      if (request.last?.role === "user") return { toolCalls: [{ name: "bash", arguments: { command: `sleep 300; echo ${marker}` } }] };
      return { text: "slept" };
    }
    const last = request.last;
    const lastText = textOf(last);
    if (last?.role === "user" && lastText.startsWith("PARENT start"))
      return {
        toolCalls: [
          { name: "subagent_spawn", arguments: { task: "CHILD slow", title: "Slow" } },
          { name: "subagent_spawn", arguments: { task: "CHILD sleep", title: "Sleeper" } },
        ],
      };
    // Pi runs one reply's tool calls side by side: the send after the cancel comes in the next reply.
    if (last?.role === "user" && lastText.startsWith("PARENT send"))
      return {
        toolCalls: [
          { name: "subagent_send", arguments: { id: slowId, message: "FOLLOW-UP for the slow one" }, id: "send-running" },
          // A second send side by side with the first: the next turn, behind it.
          { name: "subagent_send", arguments: { id: slowId, message: "FOLLOW-UP two" }, id: "send-running-2" },
          { name: "subagent_cancel", arguments: { id: sleeperId }, id: "cancel" },
        ],
      };
    if (last?.role === "tool" && lastText.startsWith("Cancelled subagent"))
      return {
        toolCalls: [
          { name: "subagent_send", arguments: { id: sleeperId, message: "FOLLOW-UP for the cancelled one" }, id: "send-cancelled" },
          { name: "subagent_send", arguments: { id: "sa-000000", message: "FOLLOW-UP for nobody" }, id: "send-unknown" },
          { name: "subagent_send", arguments: { id: slowId, message: "   " }, id: "send-empty" },
          { name: "subagent_check", arguments: { id: slowId }, id: "check-waiting" },
        ],
      };
    if (last?.role === "user" && lastText.startsWith("PARENT wait")) return { toolCalls: [{ name: "subagent_wait", arguments: { ids: [slowId] } }] };
    return { text: "ok" };
  });
  const from = s.pi.events.length;
  await s.pi.prompt("PARENT start two");
  await s.pi.waitFor((e) => e.type === "agent_settled", 30_000, "the spawns", from);
  const spawns = s.pi.where((e) => e.type === "tool_execution_end" && e["toolName"] === "subagent_spawn").map(toolText);
  slowId = spawnedId(spawns.find((text) => text.includes('"Slow"')) ?? "");
  sleeperId = spawnedId(spawns.find((text) => text.includes('"Sleeper"')) ?? "");
  await eventually("the sleeper's bash command to run", () => processesWith(`echo ${marker}`).length > 0, 30_000);

  const sendFrom = s.pi.events.length;
  await s.pi.prompt("PARENT send while it runs");
  await s.pi.waitFor((e) => e.type === "agent_settled", 30_000, "the sends", sendFrom);
  const ends = s.pi.events.slice(sendFrom).filter((e) => e.type === "tool_execution_end");
  const [queued, queued2, cancelled, afterCancel, unknown, empty, checked] = ["send-running", "send-running-2", "cancel", "send-cancelled", "send-unknown", "send-empty", "check-waiting"].map((id) =>
    ends.find((e) => e["toolCallId"] === id),
  );
  assert.equal(queued?.["isError"], false, toolText(queued!));
  assert.equal(
    toolText(queued!),
    `Queued for subagent ${slowId} "Slow": it is still working on turn 1; your message starts turn 2 when that ends. ` +
      `Its answer comes as ${slowId}.2 "Slow (turn 2)", delivered to you when you are idle; call subagent_wait to wait for it now.`,
  );
  assert.equal(
    toolText(queued2!),
    `Queued for subagent ${slowId} "Slow": it is still working on turn 2; your message starts turn 3 when that ends. ` +
      `Its answer comes as ${slowId}.3 "Slow (turn 3)", delivered to you when you are idle; call subagent_wait to wait for it now.`,
  );
  assert.equal(toolText(cancelled!), `Cancelled subagent ${sleeperId}: its process tree was ended.`);
  assert.equal(afterCancel?.["isError"], true);
  assert.equal(toolText(afterCancel!), `subagent_send: subagent ${sleeperId} was cancelled; its conversation is closed. Start a new one with subagent_spawn.`);
  assert.equal(unknown?.["isError"], true);
  assert.equal(toolText(unknown!), "subagent_send: no subagent sa-000000 in this session (subagent_list shows them)");
  assert.equal(empty?.["isError"], true);
  assert.equal(toolText(empty!), "subagent_send: `message` is empty");
  assert.equal(
    toolText(checked!),
    `Subagent ${slowId}.3 "Slow (turn 3)": turn 3: queued\nLatest activity:\nwaiting for turn 2 of ${slowId} to end`,
  );
  await eventually("the sleeper's tree to end", () => processesWith(marker).length === 0, 10_000);
  // The queued turn is known to handoffd while it waits (so a wait on it waits).
  const waiting = await s.worker.check({ parentId: s.sessionId, childId: `${slowId}.2` });
  assert.equal(waiting.state, "running");
  assert.equal(waiting.preview, `waiting for turn 1 of ${slowId} to end`);

  const waitFrom = s.pi.events.length;
  await s.pi.prompt("PARENT wait for the slow one");
  await eventually("the parent's wait asleep at handoffd", async () => (await s.worker.status()).waits === 1, 30_000);
  // Turn 1 is held: the extension still has turn 2 waiting for it, and turn 2 never asked the model.
  const stillWaiting = await s.worker.check({ parentId: s.sessionId, childId: `${slowId}.2` });
  assert.equal(stillWaiting.preview, `waiting for turn 1 of ${slowId} to end`);
  assert.equal(secondAskedAt, 0, "turn 2 has not started while turn 1 runs");
  releaseFirst?.();
  const waited = await toolEnd(s.pi, "subagent_wait", 60_000, waitFrom);
  const text = toolText(waited);
  assert.match(text, new RegExp(`Subagent ${slowId} "Slow" finished\\.\\n\\nBEGIN first\\nthe first answer\\nEND first`));
  assert.match(text, new RegExp(`Subagent ${slowId}\\.2 "Slow \\(turn 2\\)" finished\\.\\n\\nBEGIN second\\nthe second answer\\nEND second`));
  assert.match(text, new RegExp(`Subagent ${slowId}\\.3 "Slow \\(turn 3\\)" finished\\.\\n\\nBEGIN third\\nthe third answer\\nEND third`));
  assert.ok(thirdSawSecond, "turn 3's request carries turn 2's answer");
  assert.ok(secondAskedAt >= firstAnsweredAt && firstAnsweredAt > 0, "turn 2 asked the model after turn 1 answered");
  assert.ok(secondSawFirst, "turn 2's request carries turn 1's answer");
});

test("a send survives a handoffd restart in the middle: the second turn's answer arrives once", async () => {
  let releaseSecond: (() => void) | undefined;
  const secondHeld = new Promise<void>((done) => (releaseSecond = done));
  let secondAsked = false;
  let childId = "";
  const s = await scenario(async (request) => {
    if (request.firstUser.startsWith("CHILD")) {
      if (request.last?.role === "user" && textOf(request.last).startsWith("FOLLOW-UP")) {
        secondAsked = true;
        await secondHeld;
        return { text: "BEGIN again\nafter the restart\nEND again" };
      }
      return { text: "BEGIN once\nthe first turn\nEND once" };
    }
    const last = request.last;
    const lastText = textOf(last);
    if (last?.role === "user" && lastText.startsWith("PARENT start")) return { toolCalls: [{ name: "subagent_spawn", arguments: { task: "CHILD work", title: "Work" } }] };
    if (last?.role === "tool" && lastText.startsWith("Started subagent")) return { toolCalls: [{ name: "subagent_wait", arguments: {} }] };
    if (last?.role === "user" && lastText.startsWith("PARENT send")) return { toolCalls: [{ name: "subagent_send", arguments: { id: childId, message: "FOLLOW-UP more" } }] };
    return { text: "ok" };
  });
  await s.pi.prompt("PARENT start");
  childId = spawnedId(toolText(await toolEnd(s.pi, "subagent_spawn")));
  await toolEnd(s.pi, "subagent_wait", 60_000);
  await s.pi.waitFor((e) => e.type === "agent_settled", 20_000, "the parent to settle");
  const sendFrom = s.pi.events.length;
  await s.pi.prompt("PARENT send more");
  assert.equal((await toolEnd(s.pi, "subagent_send", 30_000, sendFrom))["isError"], false);
  await s.pi.waitFor((e) => e.type === "agent_settled", 20_000, "the parent to settle", sendFrom);
  await eventually("the second turn to ask the model", () => secondAsked, 30_000);

  const killedAt = s.pi.events.length;
  await s.daemon.kill();
  // Down until the extension has seen it gone (its status line says so); what follows waits for what it needs.
  await s.pi.waitFor((e) => e["statusKey"] === "handoff" && e["statusText"] === "handoff: daemon unreachable, retrying", 10_000, "the extension to see handoffd gone", killedAt);
  await s.daemon.launch();
  await eventually("the second turn known to the new daemon", async () => {
    try {
      return (await s.worker.check({ parentId: s.sessionId, childId: `${childId}.2` })).state === "running" || undefined;
    } catch {
      return undefined;
    }
  }, 15_000);
  releaseSecond?.();
  await eventually("the second answer to land", () => deliveredBatches(s.pi).some((b) => b.text.includes("END again")), 30_000);
  await s.pi.waitFor((e) => e.type === "agent_settled", 20_000, "the triggered run", deliveredBatches(s.pi).at(-1)?.index ?? 0);
  await nothingLeftToDeliver(s);
  const batches = deliveredBatches(s.pi).filter((b) => b.text.includes("END again"));
  assert.equal(batches.length, 1, "the second turn's answer arrived once");
  assert.match(batches[0]?.text ?? "", new RegExp(`^Subagent ${childId}\\.2 "Work \\(turn 2\\)" finished\\.`));
  const seen = s.model.requestsWhere((r) => r.firstUser.startsWith("PARENT")).flatMap((r) => r.body.messages.map(textOf)).filter((t) => t.includes("END again"));
  assert.ok(seen.length >= 1, "the parent model read it");
});

test("subagent_list names every state of 10 children (queued, running, completed, delivered, cancelled) within 2 KiB; the status line knows turns", async () => {
  const marker = `handoff-list-${randomBytes(4).toString("hex")}`;
  const long = exactReport(40_000, 800, "LONG");
  let scenarioRef: Scenario | undefined;
  const s = await scenario(
    async (request) => {
      const first = request.firstUser;
      if (first.startsWith("CHILD long")) return { text: long };
      if (first.startsWith("CHILD short")) return { text: "short answer" };
      if (first.startsWith("CHILD quick")) return { text: "quick answer\nQUICK" };
      if (first.startsWith("CHILD sleep")) {
        if (request.last?.role === "user") return { toolCalls: [{ name: "bash", arguments: { command: `sleep 300; echo ${marker}` } }] };
        return { text: "slept" };
      }
      const last = request.last;
      const lastText = textOf(last);
      const idOf = (title: string): string => {
        for (const message of request.body.messages) {
          const match = new RegExp(`(?:Started|Queued) subagent (sa-[0-9a-f]+) "${title}"`).exec(textOf(message));
          if (match?.[1] !== undefined) return match[1];
        }
        return "none";
      };
      if (last?.role === "user" && lastText.startsWith("PARENT go"))
        return {
          toolCalls: [
            { name: "subagent_spawn", arguments: { task: "CHILD long", title: "Long" } },
            { name: "subagent_spawn", arguments: { task: "CHILD short", title: "Short" } },
          ],
        };
      if (last?.role === "tool" && lastText.includes('"Short"') && lastText.startsWith("Started"))
        return { toolCalls: [{ name: "subagent_wait", arguments: {} }] };
      if (last?.role === "tool" && lastText.includes("END LONG"))
        return {
          toolCalls: [
            { name: "subagent_spawn", arguments: { task: "CHILD sleep to cancel", title: "Cancelled" } },
            { name: "subagent_spawn", arguments: { task: "CHILD quick one", title: "Quick one" } },
            { name: "subagent_spawn", arguments: { task: "CHILD quick two", title: "Quick two" } },
          ],
        };
      if (last?.role === "tool" && lastText.includes('"Quick two"'))
        return { toolCalls: [{ name: "subagent_cancel", arguments: { id: idOf("Cancelled") } }] };
      if (last?.role === "tool" && lastText.startsWith("Cancelled subagent")) {
        // Both quick ones completed at handoffd; the parent is busy, so nothing is delivered.
        const check = scenarioRef;
        await eventually("the quick ones to complete", async () => {
          if (check === undefined) return undefined;
          const states = await Promise.all(["Quick one", "Quick two"].map((title) => check.worker.check({ parentId: check.sessionId, childId: idOf(title) })));
          return states.every((state) => state.state === "completed") || undefined;
        }, 30_000);
        // Its guard and Pi (the task is on their command lines) gone, not only its bash command.
        await eventually("the cancelled sleeper to end", () => processesWith("CHILD sleep to cancel").length === 0 || undefined, 30_000);
        // The completions' answers and the sleeper's exit have reached the extension: its
        // subagents status line counts none of them running any more.
        await eventually("no child running in the extension's status", () => {
          const line = check?.pi.where((e) => e.type === "extension_ui_request" && e["statusKey"] === "handoff-subagents").at(-1);
          return (line !== undefined && !String(line["statusText"] ?? "").includes("running")) || undefined;
        }, 30_000);
        return {
          toolCalls: ["Run one", "Run two", "Run three", "Wait one", "Wait two"].map((title) => ({
            name: "subagent_spawn",
            arguments: { task: `CHILD sleep ${title}`, title },
          })),
        };
      }
      if (last?.role === "tool" && lastText.includes('"Wait two"')) return { toolCalls: [{ name: "subagent_send", arguments: { id: idOf("Run one"), message: "FOLLOW-UP and more" } }] };
      if (last?.role === "tool" && lastText.startsWith("Queued for subagent")) {
        await eventually("three sleepers to run", () => processesWith(`echo ${marker}`).length >= 3 || undefined, 30_000);
        return { toolCalls: [{ name: "subagent_list", arguments: {} }] };
      }
      return { text: "listed" };
    },
    { env: { HANDOFF_SUBAGENT_MAX_RUNNING: "3" } },
  );
  scenarioRef = s;
  await s.pi.prompt("PARENT go");
  const listed = await toolEnd(s.pi, "subagent_list", 120_000);
  const text = toolText(listed);
  assert.ok(Buffer.byteLength(text) <= 2048, `${Buffer.byteLength(text)} B:\n${text}`);
  const rows = text.split("\n");
  assert.equal(rows[0], "Subagents of this session: 10 (3 running, 2 queued, 2 completed, 2 delivered, 1 cancelled).", text);
  const stateOf = (title: string): string => {
    const row = rows.find((line) => line.includes(` "${title}" `));
    assert.ok(row !== undefined, `a line for ${title}:\n${text}`);
    assert.match(row, /^sa-[0-9a-f]+ "/);
    return row;
  };
  assert.match(stateOf("Long"), /"Long" delivered · turn 1 · 39\.1 KB, 800 lines · cut, full text: \/.*\/[0-9a-f]{64}\.txt$/);
  assert.match(stateOf("Short"), /"Short" delivered · turn 1 · 12 B, 1 line$/);
  assert.match(stateOf("Cancelled"), /"Cancelled" cancelled · turn 1$/);
  assert.match(stateOf("Quick one"), /"Quick one" completed · turn 1 · 18 B, 2 lines$/);
  assert.match(stateOf("Quick two"), /"Quick two" completed · turn 1 · 18 B, 2 lines$/);
  assert.match(stateOf("Run one"), /"Run one" running · turn 1 · 1 more turn queued$/);
  for (const title of ["Run two", "Run three"]) assert.match(stateOf(title), new RegExp(`"${title}" running · turn 1$`));
  for (const title of ["Wait one", "Wait two"]) assert.match(stateOf(title), new RegExp(`"${title}" queued · turn 1$`));
  const statuses = s.pi.where((e) => e.type === "extension_ui_request" && e["statusKey"] === "handoff-subagents").map((e) => String(e["statusText"]));
  assert.ok(statuses.includes("subagents: 3 running, 2 queued, 1 turn waiting, 2 pending"), statuses.join("\n"));
});
