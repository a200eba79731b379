// HandoffClient against a real handoffd: round trips, errors with their codes, artifacts,
// waits that give up without consuming, and reconnection after a daemon restart.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";

import { HandoffClient, type ClientEvent } from "../src/client.js";
import { HandoffError } from "../src/errors.js";
import { ErrorCode, type WaitResult } from "../src/protocol.js";
import { completeBlocking, Daemon, eventually, numberedReport } from "./support/daemon.js";

async function rejection(promise: Promise<unknown>): Promise<HandoffError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof HandoffError, `expected a HandoffError, got ${String(error)}`);
    return error;
  }
  assert.fail("expected the call to fail");
}

describe("HandoffClient against handoffd", () => {
  let daemon: Daemon;
  let client: HandoffClient;

  before(async () => {
    daemon = await Daemon.start();
    client = new HandoffClient({ socketPath: daemon.socketPath, clientName: "client-test" });
    const info = await client.connect();
    assert.equal(info.protocolVersion, "1");
    assert.equal(info.parentId, null);
    assert.equal(info.artifactDir, daemon.artifactDir);
  });

  after(async () => {
    client.close();
    await daemon.dispose();
  });

  test("completed -> wait returns the exact text and consumes it", async () => {
    const text = "all done\nverdict: ship it\n";
    assert.equal((await client.started({ parentId: "p1", childId: "a", title: "task a" })).state, "running");
    const done = await client.completed({ parentId: "p1", childId: "a", status: "done", finalText: text });
    assert.equal(done.duplicate, false);
    assert.equal(done.bytes, Buffer.byteLength(text));
    assert.equal(done.lines, 3);
    assert.equal(done.sha256, createHash("sha256").update(text).digest("hex"));

    const again = await client.completed({ parentId: "p1", childId: "a", status: "done", finalText: text });
    assert.equal(again.duplicate, true, "resending a completion is idempotent");

    const result = await client.wait({ parentId: "p1", childIds: ["a"], timeoutMs: 5_000 });
    assert.equal(result.timedOut, false);
    assert.deepEqual(result.pending, []);
    assert.equal(result.deferred, 0);
    assert.equal(result.sections.length, 1);
    const [section] = result.sections;
    assert.equal(section?.childId, "a");
    assert.equal(section?.title, "task a");
    assert.equal(section?.status, "done");
    assert.equal(section?.text, text, "a result within the caps is returned byte for byte");
    assert.equal(section?.truncated, false);
    assert.equal(section?.artifact, null);
    assert.ok(result.text.includes(text));
    assert.equal(result.budget.mode, "static");

    assert.equal((await client.check({ parentId: "p1", childId: "a" })).state, "delivered");
    const second = await client.wait({ parentId: "p1", childIds: ["a"], timeoutMs: 100 });
    assert.equal(second.sections.length, 0, "a wait consumes what it returned");
  });

  test("wait with a timeout reports the children still running", async () => {
    await client.started({ parentId: "p1", childId: "slow" });
    const result = await client.wait({ parentId: "p1", childIds: ["slow"], timeoutMs: 150 });
    assert.equal(result.timedOut, true);
    assert.deepEqual(result.pending, ["slow"]);
    assert.equal(result.sections.length, 0);
  });

  test("check shows progress while running, then the completed state", async () => {
    await client.started({ parentId: "p2", childId: "c", title: "checked" });
    assert.equal(client.progress({ parentId: "p2", childId: "c", text: "reading src/main.cpp" }), true);
    const running = await eventually("the progress preview", async () => {
      const r = await client.check({ parentId: "p2", childId: "c" });
      return r.preview.includes("reading src/main.cpp") && r;
    });
    assert.equal(running.state, "running");
    assert.equal(running.status, null);
    assert.equal(running.bytes, null);

    await client.completed({ parentId: "p2", childId: "c", status: "error", error: "tests failed", finalText: "1 failing" });
    const completed = await client.check({ parentId: "p2", childId: "c" });
    assert.equal(completed.state, "completed");
    assert.equal(completed.status, "error");
    assert.equal(completed.error, "tests failed");
    assert.equal(completed.title, "checked");
    assert.equal(completed.bytes, 9);
    assert.equal(completed.lines, 1);
    assert.equal(completed.preview, "1 failing");
  });

  test("cancel drops running and completed children; their results are consumed", async () => {
    await client.started({ parentId: "p3", childId: "running" });
    await client.completed({ parentId: "p3", childId: "finished", status: "done", finalText: "not wanted" });
    const queuedBefore = (await client.status()).queue.results;
    const result = await client.cancel({ parentId: "p3", childIds: ["running", "finished", "never-heard-of"] });
    assert.deepEqual([...result.cancelled].sort(), ["finished", "running"]);
    assert.equal(result.consumed, 1);
    assert.equal((await client.check({ parentId: "p3", childId: "finished" })).state, "cancelled");
    assert.equal((await client.check({ parentId: "p3", childId: "running" })).state, "cancelled");
    await eventually("the cancelled result to leave the queue", async () => (await client.status()).queue.results === queuedBefore - 1);
    const waited = await client.wait({ parentId: "p3", childIds: ["finished"], timeoutMs: 100 });
    assert.equal(waited.sections.length, 0);
  });

  test("a truncated result's artifact holds the full text and pages like Pi's read", async () => {
    const text = numberedReport(3000, "long");
    await client.completed({ parentId: "p4", childId: "long", status: "done", finalText: text });
    const result = await client.wait({ parentId: "p4", childIds: ["long"], timeoutMs: 5_000 });
    const section = result.sections[0];
    assert.ok(section !== undefined);
    assert.equal(section.truncated, true);
    assert.equal(section.totalLines, 3000);
    assert.equal(section.totalBytes, Buffer.byteLength(text));
    assert.ok(section.text.startsWith("BEGIN long"), "the head is kept");
    assert.ok(section.text.includes("END long"), "the tail is kept");
    assert.ok(Buffer.byteLength(section.text) <= result.budget.perResultBytes);
    const artifact = section.artifact;
    const omitted = section.omitted;
    assert.ok(artifact !== null && artifact.saved && artifact.path !== undefined);
    assert.ok(omitted !== null);
    assert.equal(artifact.path, join(daemon.artifactDir, `${artifact.sha256}.txt`));
    assert.equal(readFileSync(artifact.path, "utf8"), text, "the artifact is the exact text");
    assert.equal(statSync(artifact.path).mode & 0o777, 0o600);
    assert.ok(section.text.includes(`offset=${omitted.offset}`), "the footer names the read offset");

    const lines = text.split("\n");
    const page = await client.artifactRead({ sha256: artifact.sha256, offset: omitted.offset, limit: 5 });
    assert.equal(page.path, artifact.path);
    assert.equal(page.firstLine, omitted.offset);
    assert.equal(page.lastLine, omitted.offset + 4);
    assert.equal(page.totalLines, 3000);
    assert.equal(page.text, lines.slice(omitted.offset - 1, omitted.offset + 4).join("\n"));
    assert.equal(page.nextOffset, omitted.offset + 5);

    const tail = await client.artifactRead({ sha256: artifact.sha256, offset: 2999 });
    assert.equal(tail.text, `${lines[2998]}\nEND long`);
    assert.equal(tail.nextOffset, null);
  });

  test("errors carry the daemon's JSON-RPC codes", async () => {
    const unknownParent = await rejection(client.check({ parentId: "nobody", childId: "x" }));
    assert.equal(unknownParent.kind, "rpc");
    assert.equal(unknownParent.code, ErrorCode.UnknownParent);
    assert.equal(unknownParent.code, -32001);
    assert.equal(unknownParent.method, "subagent/check");
    assert.match(unknownParent.message, /nobody/);

    await client.started({ parentId: "p5", childId: "known" });
    const unknownChild = await rejection(client.wait({ parentId: "p5", childIds: ["known", "ghost"], timeoutMs: 10 }));
    assert.equal(unknownChild.code, ErrorCode.UnknownChild);

    const notFound = await rejection(client.artifactRead({ sha256: "0".repeat(64) }));
    assert.equal(notFound.code, ErrorCode.NotFound);

    const badName = await rejection(client.artifactRead({ sha256: "../../etc/passwd" }));
    assert.equal(badName.code, ErrorCode.InvalidParams);

    const badStatus = await rejection(client.call("subagent/completed", { parentId: "p5", childId: "known", status: "finished", finalText: "" }));
    assert.equal(badStatus.code, ErrorCode.InvalidParams);

    const unknownMethod = await rejection(client.call("subagent/teleport", {}));
    assert.equal(unknownMethod.code, ErrorCode.MethodNotFound);
    assert.equal(unknownMethod.retryable, false);
  });

  test("giving up on a wait does not consume the results", async () => {
    await client.started({ parentId: "p6", childId: "late" });
    const abort = new AbortController();
    const waiting = client.wait({ parentId: "p6", childIds: ["late"] }, { signal: abort.signal });
    await eventually("the wait asleep in handoffd", async () => (await client.status()).waits === 1, 5_000);
    abort.abort();
    const error = await rejection(waiting);
    assert.equal(error.kind, "aborted");

    await client.completed({ parentId: "p6", childId: "late", status: "done", finalText: "still here" });
    const result = await client.wait({ parentId: "p6", childIds: ["late"], timeoutMs: 5_000 });
    assert.equal(result.sections[0]?.text, "still here");
  });

  test("a wait given up with onLateResult is cancelled while asleep: nothing taken, nothing late", async () => {
    await client.started({ parentId: "p6b", childId: "slow" });
    const heldBefore = (await client.status()).queue.results;
    const abort = new AbortController();
    const late: unknown[] = [];
    const waiting = client.wait({ parentId: "p6b", childIds: ["slow"] }, { signal: abort.signal, onLateResult: (r) => late.push(r) });
    await eventually("the wait asleep in handoffd", async () => (await client.status()).waits === 1, 5_000);
    abort.abort();
    const error = await rejection(waiting);
    assert.equal(error.kind, "aborted");
    // handoffd answered the cancel with -32800: the side connection is gone at once, not after the grace.
    await eventually("the cancelled wait's connection to close", async () => (await client.status()).connections === 1, 3_000);

    await client.completed({ parentId: "p6b", childId: "slow", status: "done", finalText: "kept for later" });
    assert.equal((await client.status()).queue.results, heldBefore + 1, "the cancelled wait took nothing");
    assert.deepEqual(late, []);
    const result = await client.wait({ parentId: "p6b", childIds: ["slow"], timeoutMs: 5_000 });
    assert.equal(result.sections[0]?.text, "kept for later");
  });

  test("a wait given up just after handoffd answered hands the consumed results to onLateResult", async () => {
    await client.started({ parentId: "p6c", childId: "quick" });
    const heldBefore = (await client.status()).queue.results;
    const abort = new AbortController();
    const late: WaitResult[] = [];
    const waiting = client.wait({ parentId: "p6c", childIds: ["quick"] }, { signal: abort.signal, onLateResult: (r) => late.push(r) });
    // Its initialize answered and the wait sent, read and asleep in handoffd.
    await eventually("the wait asleep in handoffd", async () => (await client.status()).waits === 1, 5_000);
    // With this event loop blocked, another process completes the child: handoffd answers the
    // wait, and the answer sits unread in this process's socket until the loop runs again.
    completeBlocking(daemon.socketPath, "p6c", "quick", "answered before the Esc");
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 500);  // handoffd writes its answer
    abort.abort();  // the Esc, before this process has read that answer
    const error = await rejection(waiting);
    assert.equal(error.kind, "aborted");
    await eventually("the late answer", () => late.length === 1 || undefined, 5_000);
    assert.equal(late[0]?.sections.length, 1);
    assert.equal(late[0]?.sections[0]?.text, "answered before the Esc");
    const status = await client.status();
    assert.equal(status.queue.results, heldBefore, "consumed by the answer, which reached onLateResult");
    await eventually("the side connection to close", async () => (await client.status()).connections === 1, 3_000);
  });

  test("a client that cannot reach the daemon says so", async () => {
    const absent = new HandoffClient({ socketPath: join(daemon.dir, "run", "absent.sock") });
    const error = await rejection(absent.connect());
    assert.equal(error.kind, "not-connected");
    assert.match(error.message, /absent\.sock.*ENOENT/);
    assert.equal(error.retryable, true);
    const call = await rejection(absent.status());
    assert.equal(call.kind, "not-connected");
    absent.close();
  });
});

describe("HandoffClient across a daemon restart", () => {
  test("in-flight calls fail as connection-lost; the client reconnects and works again", async () => {
    const daemon = await Daemon.start();
    const events: ClientEvent[] = [];
    const client = new HandoffClient({
      socketPath: daemon.socketPath,
      reconnect: { initialDelayMs: 20, maxDelayMs: 200 },
      onEvent: (event) => events.push(event),
    });
    try {
      await client.connect();
      await client.started({ parentId: "r", childId: "pending" });
      const inFlight = rejection(client.wait({ parentId: "r", childIds: ["pending"] }));
      await eventually("the wait asleep in handoffd", async () => (await client.status()).waits === 1);
      await daemon.kill();
      const lost = await inFlight;
      assert.equal(lost.kind, "connection-lost");
      assert.equal(lost.retryable, true);
      await eventually("the disconnected event", () => events.some((e) => e.type === "disconnected"));
      assert.equal(client.connected, false);

      await daemon.launch();
      await eventually("the reconnection", () => events.some((e) => e.type === "connected" && e.reconnected));
      assert.equal(client.connected, true);
      const status = await client.status();
      assert.equal(status.connections, 1);
    } finally {
      client.close();
      await daemon.dispose();
    }
  });

  test("calls made while the daemon is down wait for it, up to their timeout", async () => {
    const daemon = await Daemon.start();
    const client = new HandoffClient({ socketPath: daemon.socketPath, reconnect: { initialDelayMs: 20, maxDelayMs: 100 } });
    try {
      await client.connect();
      await daemon.kill();
      await eventually("the client to notice", () => !client.connected);
      const timedOut = await rejection(client.status({ timeoutMs: 150 }));
      assert.equal(timedOut.kind, "not-connected");
      const later = client.completed({ parentId: "w", childId: "x", status: "done", finalText: "sent after the restart" });
      await daemon.launch();
      assert.equal((await later).duplicate, false);
    } finally {
      client.close();
      await daemon.dispose();
    }
  });
});
