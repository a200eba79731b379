// Auto-delivery into a real Pi of children spawned by subagent_spawn: results of children that
// finish while the parent is busy arrive after it settles, as one batch that starts a turn;
// 4 x 21,333 B fit one batch under 48 KiB with every first and last line; a parent at 95% of its
// context gets a smaller batch; a delivery is acknowledged only once its message_end is done.
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";

import { eventually, packageRoot } from "../support/daemon.js";
import { textOf, type ModelRequest } from "../support/scripted-model.js";
import { deliveredBatches, exactReport, nothingLeftToDeliver, parentRequests, processesWith, scenarioPerTest, spawnedId, spawnedIdsSeen, startScenario, toolText, type Scenario } from "../support/subagent-scenario.js";

const { scenario, onCleanup } = scenarioPerTest();

const CONTEXT_WINDOW = 200_000;
const TAGS = ["alpha", "bravo", "charlie", "delta"];

/**
 * The parent spawns four children of 21,333 B / 262 lines each, and holds its next reply until the
 * daemon has all four results (so they come as one batch), reporting `promptTokens` with it.
 */
async function fourChildren(promptTokens: number): Promise<{ s: Scenario; batch: { text: string; details: Record<string, unknown> } }> {
  let sessionId = "";
  let s: Scenario | undefined;
  s = await scenario(async (request: ModelRequest) => {
    const tag = TAGS.find((t) => request.firstUser === `CHILD ${t}`);
    if (tag !== undefined) return { text: exactReport(21_333, 262, tag) };
    const last = request.last;
    if (last?.role === "user" && textOf(last).startsWith("PARENT"))
      return { toolCalls: TAGS.map((t) => ({ name: "subagent_spawn", arguments: { task: `CHILD ${t}`, title: t } })) };
    if (last?.role === "tool" && s !== undefined) {
      const worker = s.worker;
      await eventually("four completed results at the daemon", async () => (await worker.status()).queue.results === 4, 30_000);
      return { text: "waiting for my subagents", promptTokens };
    }
    return { text: "thanks", promptTokens };
  }, { contextWindow: CONTEXT_WINDOW });
  sessionId = s.sessionId;
  await s.pi.prompt("PARENT spawn four");
  const landed = await s.pi.waitFor(
    (e) => e.type === "message_end" && (e["message"] as { customType?: string }).customType === "handoff",
    60_000,
    "the auto-delivered batch",
  );
  await s.pi.waitFor((e) => e.type === "agent_settled", 20_000, "the triggered run to settle", s.pi.events.indexOf(landed));
  const batch = deliveredBatches(s.pi)[0];
  assert.ok(batch !== undefined && sessionId !== "");
  // The delivery started a turn: the model's last request holds the batch as it was delivered.
  const last = parentRequests(s.model, "PARENT").at(-1);
  assert.ok(last?.body.messages.map(textOf).includes(batch.text), "the model read the delivered batch");
  return { s, batch };
}

/**
 * A listener on `path` that closes each connection once its first line has come, counting those
 * whose line satisfies `counts`; close() removes it.
 */
async function closeEveryConnection(path: string, counts: (line: string) => boolean): Promise<{ readonly counted: number; close(): Promise<void> }> {
  let counted = 0;
  const open = new Set<Socket>();
  const server = createServer((socket) => {
    open.add(socket);
    socket.once("close", () => open.delete(socket));
    let line = "";
    socket.setEncoding("utf8");
    socket.on("error", () => undefined);
    socket.on("data", (text: string) => {
      line += text;
      if (!line.includes("\n")) return;
      if (counts(line)) counted += 1;
      socket.destroy();
    });
  });
  rmSync(path, { force: true });
  await new Promise<void>((done, fail) => server.once("error", fail).listen(path, () => done()));
  return {
    get counted() {
      return counted;
    },
    close: () =>
      new Promise<void>((done) => {
        server.close(() => done());  // Node removes the path
        for (const socket of open) socket.destroy();
      }),
  };
}

let fullBatchBytes = 0;

test("4 x 21,333 B finishing while the parent is busy: one batch after it settles, under 48 KiB, every first and last line", async () => {
  const { s, batch } = await fourChildren(1_000);
  assert.equal(deliveredBatches(s.pi).length, 1, "one batch");
  fullBatchBytes = Buffer.byteLength(batch.text);
  assert.ok(fullBatchBytes <= 48 * 1024, `${fullBatchBytes} B within 48 KiB`);
  for (const tag of TAGS) {
    assert.ok(batch.text.includes(`\nBEGIN ${tag}\n`), `BEGIN ${tag}`);
    assert.ok(batch.text.includes(`\nEND ${tag}\n`), `END ${tag}`);
  }
  const sections = batch.details["sections"] as { totalBytes: number; totalLines: number; status: string }[];
  assert.deepEqual(sections.map((x) => [x.status, x.totalBytes, x.totalLines]), TAGS.map(() => ["done", 21_333, 262]));
  await eventually("the batch to be acknowledged", async () => {
    const { queue } = await s.worker.status();
    return queue.results === 0 && queue.deliveries === 0;
  });
  const statuses = s.pi.where((e) => e.type === "extension_ui_request" && e["statusKey"] === "handoff-subagents").map((e) => e["statusText"]);
  assert.ok(statuses.includes("subagents: 4 pending"), `the status line showed the pending results: ${JSON.stringify(statuses)}`);
});

test("a parent at 95% of its context gets a smaller batch", async () => {
  const { s, batch } = await fourChildren(Math.round(CONTEXT_WINDOW * 0.95));
  const budget = batch.details["budget"] as { mode: string; batchCapBytes: number; usage: { tokens: number } | null };
  assert.equal(budget.mode, "dynamic");
  // Pi counts the reply too: prompt_tokens 190,000 + completion_tokens 10.
  assert.equal(budget.usage?.tokens, 190_010, "the daemon used Pi's live usage");
  const bytes = Buffer.byteLength(batch.text);
  assert.ok(bytes <= budget.batchCapBytes, `${bytes} B within the cap ${budget.batchCapBytes}`);
  assert.ok(budget.batchCapBytes < 48 * 1024);
  assert.ok(fullBatchBytes === 0 || bytes < fullBatchBytes, `smaller than at low usage (${bytes} < ${fullBatchBytes})`);
  const sections = batch.details["sections"] as { childId: string }[];
  assert.ok(sections.length >= 1);
  void s;
});

test("a delivery is acknowledged only once its message_end has run, not when sendMessage returns", async () => {
  // An extension loaded before ours holds the batch's message_end until the test lets it go (Pi
  // awaits handlers in order): it says it started in one file and waits for another.
  const dir = mkdtempSync(join(tmpdir(), "handoff-slow-ext-"));
  onCleanup(() => rmSync(dir, { recursive: true, force: true }));
  const startedFile = join(dir, "message_end-started");
  const releaseFile = join(dir, "message_end-release");
  const extension = join(dir, "slow-message-end.js");
  writeFileSync(
    extension,
    `import { existsSync, writeFileSync } from "node:fs";
export default function (pi) {
  pi.on("message_end", async (event) => {
    if (event.message.role !== "custom" || event.message.customType !== "handoff") return;
    writeFileSync(${JSON.stringify(startedFile)}, String(Date.now()));
    // The poll interval: a file is all the test can hand this process.
    while (!existsSync(${JSON.stringify(releaseFile)})) await new Promise((done) => setTimeout(done, 20));
  });
}
`,
  );
  const s = await scenario(
    (request) => {
      if (request.firstUser.startsWith("CHILD")) return { text: "BEGIN quick\nquick answer\nEND quick" };
      if (request.last?.role === "user" && textOf(request.last).startsWith("PARENT"))
        return { toolCalls: [{ name: "subagent_spawn", arguments: { task: "CHILD quick", title: "Quick" } }] };
      return { text: "ok" };
    },
    { extensions: [extension, packageRoot] },
  );
  await s.pi.prompt("PARENT spawn one");
  await eventually("the batch's message_end to start", () => existsSync(startedFile), 30_000);
  // An acknowledgement sent before the message_end handlers (when sendMessage returned, or at
  // message_start) was in handoffd's socket before the file above was written, so handoffd reads
  // it before this request, sent after; and daemon/status waits for the removal it starts.
  const held = await s.worker.status();
  assert.equal(held.queue.deliveries, 1, "unacknowledged while its message_end runs");
  writeFileSync(releaseFile, "go");
  await eventually("the acknowledgement once the message_end handlers finished", async () => (await s.worker.status()).queue.deliveries === 0, 10_000);
  assert.equal(deliveredBatches(s.pi).length, 1);
  assert.match(deliveredBatches(s.pi)[0]?.text ?? "", /BEGIN quick\nquick answer\nEND quick/);
});

test("handoffd killed and restarted mid-session: check fails at once while it is down, spawn does not wait, wait bounds a finished result itself, the running child is known again after the restart, every result arrives once", async () => {
  let release: (() => void) | undefined;
  const gate = new Promise<void>((resolve) => (release = resolve));
  let lateId = "";
  const s = await scenario(async (request) => {
    if (request.firstUser === "CHILD early") return { text: "BEGIN early\nbefore the restart\nEND early" };
    if (request.firstUser === "CHILD down") return { text: "BEGIN down\nspawned while handoffd was down\nEND down" };
    if (request.firstUser === "CHILD late") {
      await gate;
      return { text: "BEGIN late\nafter the restart\nEND late" };
    }
    const last = request.last;
    if (last?.role === "user" && textOf(last).startsWith("PARENT spawn"))
      return {
        toolCalls: [
          { name: "subagent_spawn", arguments: { task: "CHILD early", title: "Early" } },
          { name: "subagent_spawn", arguments: { task: "CHILD late", title: "Late" } },
        ],
      };
    if (last?.role === "user" && textOf(last).startsWith("PARENT while down"))
      return {
        toolCalls: [
          { name: "subagent_spawn", arguments: { task: "CHILD down", title: "Down" } },
          { name: "subagent_check", arguments: { id: lateId } },
        ],
      };
    // Then a wait for the child spawned while down (the last one spawned): handoffd is still down.
    if (last?.role === "tool" && textOf(last).includes("handoffd is unreachable"))
      return { toolCalls: [{ name: "subagent_wait", arguments: { ids: [spawnedIdsSeen(request).at(-1) ?? ""], timeoutMs: 60_000 } }] };
    return { text: "ok" };
  });
  await s.pi.prompt("PARENT spawn two");
  lateId = spawnedId(toolText(await s.pi.waitFor((e) => e.type === "tool_execution_end" && toolText(e).includes('"Late"'), 30_000, "the late spawn")));
  await eventually("the early result to land", () => deliveredBatches(s.pi).some((b) => b.text.includes("END early")), 30_000);
  await eventually("its acknowledgement", async () => (await s.worker.status()).queue.deliveries === 0);

  // handoffd down: spawn returns at once and says so; check fails at once, not after 30 s; wait
  // waits for the child here and returns its result bounded by the extension itself.
  await s.daemon.kill();
  // Until the extension's first reconnection attempt has failed, check and wait give handoffd
  // CONNECT_GRACE_MS (2 s) to come back, and say something else. A refused connection shows
  // nothing outside Pi, so while handoffd is down its socket closes every connection once it has
  // read its first line: an initialize registering this session is that attempt, failing.
  const refusing = await closeEveryConnection(s.daemon.socketPath, (line) => line.includes(`"parentId":${JSON.stringify(s.sessionId)}`));
  await eventually("the extension's first reconnection attempt", () => refusing.counted > 0 || undefined, 10_000);
  const from = s.pi.events.length;
  const asked = Date.now();
  await s.pi.prompt("PARENT while down");
  await s.pi.waitFor((e) => e.type === "tool_execution_end" && e["toolName"] === "subagent_check", 30_000, "the check while down", from);
  const took = Date.now() - asked;
  await s.pi.waitFor((e) => e.type === "agent_settled", 60_000, "the run while down", from);
  const ends = s.pi.events.slice(from).filter((e) => e.type === "tool_execution_end");
  const byTool = new Map(ends.map((e) => [String(e["toolName"]), e]));
  assert.ok(took < 10_000, `spawn and check with handoffd down took ${took} ms`);
  assert.equal(byTool.get("subagent_spawn")?.["isError"], false);
  assert.match(toolText(byTool.get("subagent_spawn")!), /Started subagent .*handoffd is not reachable/s);
  assert.equal(byTool.get("subagent_check")?.["isError"], true);
  assert.match(toolText(byTool.get("subagent_check")!), /handoffd is unreachable/);
  assert.equal(byTool.get("subagent_wait")?.["isError"], false);
  assert.match(
    toolText(byTool.get("subagent_wait")!),
    /^Subagent sa-[0-9a-f]+ "Down" finished\.\n\nBEGIN down\nspawned while handoffd was down\nEND down\n\n\[handoff: handoff's daemon was not reached \(.*\); the result passes whole\]$/,
  );

  // Back: the still running child is known to the new daemon without finishing first.
  await refusing.close();
  await s.daemon.launch();
  await eventually("the late child known again", async () => {
    try {
      return (await s.worker.check({ parentId: s.sessionId, childId: lateId })).state === "running" || undefined;
    } catch {
      return undefined;
    }
  }, 15_000);
  release?.();
  await eventually("the late result to land", () => deliveredBatches(s.pi).some((b) => b.text.includes("END late")), 30_000);
  await s.pi.waitFor((e) => e.type === "agent_settled", 20_000, "the triggered run", deliveredBatches(s.pi).at(-1)?.index ?? 0);
  await nothingLeftToDeliver(s);
  const batches = deliveredBatches(s.pi);
  for (const end of ["END early", "END late"]) assert.equal(batches.filter((b) => b.text.includes(end)).length, 1, `${end} once`);
  // The wait delivered "down" without handoffd: the daemon, back, never delivers it again.
  assert.equal(batches.filter((b) => b.text.includes("END down")).length, 0, `END down only in the wait's result: ${JSON.stringify(batches.map((b) => [b.text.slice(0, 300), b.details]))}`);
  const { queue } = await s.worker.status();
  assert.equal(queue.results + queue.deliveries, 0, "nothing left at handoffd");
});
