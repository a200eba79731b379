// The Pi adapter against a real handoffd, with a stand-in for Pi that records what it is asked
// to do: idle -> delivery -> sendMessage -> ack, usage answers, refused deliveries, Pi versions
// with and without agent_settled, and daemon restarts.
import assert from "node:assert/strict";
import { afterEach, describe, test } from "node:test";

import type { ClientEvent } from "../src/client.js";
import { HandoffClient } from "../src/client.js";
import { HandoffError } from "../src/errors.js";
import { createHandoffAdapter, type DeliveryEvent, type HandoffAdapter, type HandoffAdapterOptions, type HandoffMessageDetails } from "../src/pi-adapter.js";
import { completeBlocking, Daemon, delay, eventually, numberedReport } from "./support/daemon.js";
import { FakeContext, FakePi, type SentMessage } from "./support/fake-pi.js";

interface Setup {
  daemon: Daemon;
  pi: FakePi;
  ctx: FakeContext;
  adapter: HandoffAdapter;
  worker: HandoffClient;
  deliveries: DeliveryEvent[];
  events: ClientEvent[];
  sessionId: string;
}

const cleanups: (() => Promise<void> | void)[] = [];

/** handoffd's default --flush-delay-ms: a delivery is decided this long after what made it due. */
const FLUSH_DELAY_MS = 50;
/** The adapter's settleGraceMs in these tests. */
const SETTLE_GRACE_MS = 50;

afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

/** A daemon, a Pi stand-in whose session has started, the adapter connected, and a worker client. */
async function setup(options: HandoffAdapterOptions & { daemon?: Daemon; connect?: boolean } = {}): Promise<Setup> {
  const { daemon: given, connect = true, ...adapterOptions } = options;
  const daemon = given ?? (await Daemon.start());
  cleanups.push(() => daemon.dispose());
  const sessionId = `session-${Math.random().toString(36).slice(2)}`;
  const pi = new FakePi();
  const ctx = new FakeContext(sessionId);
  const deliveries: DeliveryEvent[] = [];
  const events: ClientEvent[] = [];
  const adapter = createHandoffAdapter(pi.api, {
    socketPath: daemon.socketPath,
    reconnect: { initialDelayMs: 20, maxDelayMs: 200 },
    settleGraceMs: SETTLE_GRACE_MS,
    ...adapterOptions,
    onDelivery: (event) => deliveries.push(event),
    onEvent: (event) => events.push(event),
  });
  cleanups.push(() => adapter.dispose());
  await pi.emit("session_start", { reason: "startup" }, ctx);
  if (connect) await adapter.ready(5_000);
  const worker = new HandoffClient({ socketPath: daemon.socketPath, clientName: "worker", reconnect: { initialDelayMs: 20, maxDelayMs: 200 } });
  cleanups.push(() => worker.close());
  if (connect) await worker.connect();
  return { daemon, pi, ctx, adapter, worker, deliveries, events, sessionId };
}

async function busy(s: Setup): Promise<void> {
  s.ctx.idle = false;
  await s.pi.emit("agent_start", {}, s.ctx);
}

async function settle(s: Setup): Promise<void> {
  s.ctx.idle = true;
  await s.pi.emit("agent_end", { messages: [] }, s.ctx);
  await s.pi.emit("agent_settled", { aborted: false }, s.ctx);
}

async function queueEmpty(worker: HandoffClient): Promise<void> {
  await eventually("the daemon's queue to empty", async () => {
    const { queue } = await worker.status();
    return queue.results === 0 && queue.deliveries === 0;
  });
}

/**
 * Returns once handoffd has taken in what the adapter said so far and made every delivery decision
 * that could have called for, and the first step of each has reached the adapter: a round trip on
 * the adapter's own connection (what it sent before is read first); handoffd's own clock
 * (daemon/status uptimeMs) two flush delays past that, so a flush armed before is due and has run;
 * then another round trip on the adapter's connection, whose answer comes after whatever that flush
 * asked the adapter (context/usage, which a delivery asks before its parent/deliver).
 */
async function pastDeliveryDecisions(s: Setup): Promise<void> {
  await s.adapter.client?.status();
  const from = (await s.worker.status()).uptimeMs;
  await eventually("handoffd's clock two flush delays on", async () => (await s.worker.status()).uptimeMs >= from + 2 * FLUSH_DELAY_MS);
  await s.adapter.client?.status();
}

/**
 * Returns once the adapter's settle grace, started before this call, has run out and its timer has
 * run: Node runs timers in the order they fall due, so one of the same length set later runs after it.
 */
function afterSettleGrace(): Promise<void> {
  return delay(SETTLE_GRACE_MS);  // ordered after the adapter's timer, not a guess
}

/** Asserts handoffd started no delivery: it asked for no usage and nothing was sent to Pi. */
function assertNoDelivery(s: Setup, usageCallsBefore: number, why: string): void {
  assert.equal(s.ctx.usageCalls, usageCallsBefore, `${why}: handoffd asked for no usage, so it started no delivery`);
  assert.equal(s.pi.sent.length, 0, why);
}

function details(s: Setup, index: number): HandoffMessageDetails {
  const sent = s.pi.sent[index];
  assert.ok(sent !== undefined, `sendMessage call ${index} happened`);
  return sent.message.details as HandoffMessageDetails;
}

describe("Pi adapter", () => {
  test("registers the session as parent and reports its state from Pi's events", async () => {
    const s = await setup();
    assert.equal(s.adapter.parentId, s.sessionId, "parentId defaults to Pi's session id");
    assert.equal(s.adapter.client?.serverInfo?.parentId, s.sessionId, "the daemon echoed the registration");
    assert.deepEqual([...s.pi.handlers.keys()].sort(), ["agent_end", "agent_settled", "agent_start", "message_end", "session_shutdown", "session_start"]);
    assert.equal(s.pi.tools.length, 0, "the adapter registers no tools of its own");
  });

  test("idle -> delivery -> sendMessage(followUp, triggerTurn) -> acknowledged, queue emptied", async () => {
    const s = await setup();
    s.ctx.usage = { tokens: 1_000, contextWindow: 200_000, percent: 0.5 };
    await busy(s);
    await s.worker.completed({ parentId: s.sessionId, childId: "a", title: "task a", status: "done", finalText: "result a" });
    await s.worker.completed({ parentId: s.sessionId, childId: "b", title: "task b", status: "error", error: "boom", finalText: "partial b" });
    await pastDeliveryDecisions(s);
    assertNoDelivery(s, 0, "nothing is delivered while the parent is busy");
    assert.equal((await s.worker.status()).queue.results, 2);

    await settle(s);
    const sent = await eventually("the delivery", () => s.pi.sent[0]);
    assert.deepEqual(sent.options, { deliverAs: "followUp", triggerTurn: true });
    assert.equal(sent.message.customType, "handoff");
    assert.equal(sent.message.display, true);
    assert.equal(typeof sent.message.content, "string");
    const content = sent.message.content as string;
    assert.ok(content.includes("result a") && content.includes("partial b") && content.includes("boom"));
    const d = details(s, 0);
    assert.match(d.deliveryId, /\S{5,}/);
    assert.deepEqual(d.sections.map((x) => [x.childId, x.status]), [["a", "done"], ["b", "error"]]);
    assert.ok(d.sections.every((x) => !("text" in x)), "details leave the texts to the content");
    assert.equal(d.budget.mode, "dynamic", "the usage Pi reported was used");
    assert.deepEqual(d.budget.usage, { tokens: 1_000, contextWindow: 200_000, percent: 0.5 });
    assert.ok(s.ctx.usageCalls >= 1, "context/usage was answered from ctx.getContextUsage()");

    await queueEmpty(s.worker);
    // (Counted from daemon/status: a check racing the acknowledgement can hit a daemon window
    // where the text is already gone but the child not yet marked delivered.)
    await eventually("both children delivered", async () => (await s.worker.status()).children.delivered === 2);
    assert.deepEqual(s.deliveries.map((e) => [e.deliveryId, e.outcome]), [[d.deliveryId, "delivered"]]);
    assert.equal(s.pi.sent.length, 1);
  });

  test("usage with tokens: null (after compaction) gives the static caps", async () => {
    const s = await setup();
    s.ctx.usage = { tokens: null, contextWindow: 200_000, percent: null };
    await busy(s);
    for (const child of ["x", "y", "z"])
      await s.worker.completed({ parentId: s.sessionId, childId: child, status: "done", finalText: numberedReport(1_000, child) });
    await settle(s);
    await eventually("the delivery", () => s.pi.sent.length >= 1);
    const d = details(s, 0);
    assert.equal(d.budget.mode, "static");
    assert.equal(d.budget.usage, null);
    assert.equal(d.budget.batchCapBytes, 48 * 1024);
    assert.equal(d.budget.staticBatchBytes, 48 * 1024);
    assert.ok(s.ctx.usageCalls >= 1, "usage was asked and answered");
    assert.ok(Buffer.byteLength(s.pi.sent[0]?.message.content as string) <= 48 * 1024);
  });

  test("no usage at all (ctx.getContextUsage() undefined) gives the static caps too", async () => {
    const s = await setup();
    s.ctx.usage = undefined;
    await busy(s);
    await s.worker.completed({ parentId: s.sessionId, childId: "x", status: "done", finalText: "short" });
    await settle(s);
    await eventually("the delivery", () => s.pi.sent.length >= 1);
    assert.equal(details(s, 0).budget.mode, "static");
    assert.ok(s.ctx.usageCalls >= 1);
  });

  test("sendMessage throwing -> not acknowledged, delivered again later with the same deliveryId", async () => {
    const s = await setup({ redeliverDelayMs: 500 });
    let failures = 1;
    const asPi = s.pi.sendMessageImpl;
    s.pi.sendMessageImpl = (call) => {
      if (failures-- > 0) throw new Error("session is busy compacting");
      return asPi(call);
    };
    await busy(s);
    await s.worker.completed({ parentId: s.sessionId, childId: "a", status: "done", finalText: "result a" });
    await settle(s);
    await eventually("the failed attempt", () => s.deliveries.some((e) => e.outcome === "failed"));
    const held = await s.worker.status();
    assert.equal(held.queue.results, 1, "the result is still queued");
    assert.equal(held.queue.deliveries, 1, "the batch is still an unacknowledged delivery");
    assert.equal((await s.worker.check({ parentId: s.sessionId, childId: "a" })).state, "delivering");

    await eventually("the second attempt", () => s.pi.sent.length === 2);
    assert.equal(details(s, 1).deliveryId, details(s, 0).deliveryId, "the same batch, same id");
    assert.equal(s.pi.sent[1]?.message.content, s.pi.sent[0]?.message.content);
    await queueEmpty(s.worker);
    assert.deepEqual(s.deliveries.map((e) => e.outcome), ["failed", "delivered"]);
    const failed = s.deliveries[0]?.error;
    assert.ok(failed instanceof Error && failed.message === "session is busy compacting");
  });

  test("a promise returned by sendMessage is not awaited: acknowledged at message_end; a rejection is not acknowledged", async () => {
    const s = await setup({ redeliverDelayMs: 0 });
    // Some Pi surfaces resolve only after the whole triggered run: this one never does. The
    // message lands when the test lands it, after the check below: a timer of 300 ms raced
    // that check on a loaded machine (CI, 2026-12-04: checked after it had landed).
    let sent: SentMessage | undefined;
    s.pi.sendMessageImpl = (call) => {
      sent = call;
      return new Promise<void>(() => undefined);
    };
    await busy(s);
    await s.worker.completed({ parentId: s.sessionId, childId: "a", status: "done", finalText: "slow to land" });
    await settle(s);
    await eventually("sendMessage to be called", () => s.pi.sent.length === 1);
    // An acknowledgement sent when sendMessage returned would be read before this round trip on
    // the adapter's connection, and daemon/status waits for the removal it starts.
    await s.adapter.client?.status();
    assert.equal((await s.worker.status()).queue.deliveries, 1, "not acknowledged before its message_end");
    assert.ok(sent !== undefined);
    await s.pi.land(sent);
    await queueEmpty(s.worker);
    assert.equal((await s.worker.status()).queue.deliveries, 0, "acknowledged once landed, though the promise never settled");

    s.pi.sendMessageImpl = () => Promise.reject(new Error("rejected later"));
    await busy(s);
    await s.worker.completed({ parentId: s.sessionId, childId: "b", status: "done", finalText: "never taken" });
    await settle(s);
    await eventually("the failed attempt", () => s.deliveries.some((e) => e.outcome === "failed"));
    await s.adapter.client?.status();  // an acknowledgement sent before is read before this answer
    assert.equal((await s.worker.status()).queue.results, 1, "a rejected delivery stays queued");
  });

  test("no message_end within deliveryTimeoutMs: refused and resent; landing late, the resend is not shown twice", async () => {
    const s = await setup({ redeliverDelayMs: 300, deliveryTimeoutMs: 200 });
    s.ctx.idle = false;  // a busy Pi: the message may be queued, so it is not sent again
    let first: SentMessage | undefined;
    s.pi.sendMessageImpl = (call) => void (first = call);
    await s.worker.completed({ parentId: s.sessionId, childId: "a", status: "done", finalText: "queued in a busy Pi" });
    s.adapter.client?.parentState({ parentId: s.sessionId, state: "idle" });
    await eventually("the timed-out attempt", () => s.deliveries.some((e) => e.outcome === "failed"));
    assert.equal((await s.worker.status()).queue.deliveries, 1, "not acknowledged");
    assert.ok(first !== undefined);
    await s.pi.land(first);
    s.adapter.client?.parentState({ parentId: s.sessionId, state: "idle" });
    await queueEmpty(s.worker);
    assert.equal(s.pi.sent.length, 1, "shown once");
  });

  test("Pi with agent_settled: agent_end while Pi is still busy does not count as idle", async () => {
    const s = await setup();
    await busy(s);
    await s.worker.completed({ parentId: s.sessionId, childId: "a", status: "done", finalText: "result a" });
    await s.pi.emit("agent_end", { messages: [] }, s.ctx);  // Pi is retrying: isIdle() is false
    await afterSettleGrace();
    await pastDeliveryDecisions(s);
    assertNoDelivery(s, 0, "agent_end while busy is not idle");
    s.ctx.idle = true;
    await s.pi.emit("agent_settled", { aborted: false }, s.ctx);
    await eventually("the delivery", () => s.pi.sent.length === 1);
  });

  test("Pi without agent_settled: agent_end with ctx.isIdle() counts as idle", async () => {
    const s = await setup();
    await busy(s);
    await s.worker.completed({ parentId: s.sessionId, childId: "a", status: "done", finalText: "result a" });
    s.ctx.idle = true;
    await s.pi.emit("agent_end", { messages: [] }, s.ctx);  // and no agent_settled ever
    await eventually("the delivery", () => s.pi.sent.length === 1);
    await queueEmpty(s.worker);
  });

  test("once agent_settled was seen, agent_end alone is not idle even when isIdle() is true", async () => {
    const s = await setup();
    await busy(s);
    await settle(s);
    await busy(s);
    await s.worker.completed({ parentId: s.sessionId, childId: "a", status: "done", finalText: "result a" });
    s.ctx.idle = true;
    const usageCalls = s.ctx.usageCalls;
    await s.pi.emit("agent_end", { messages: [] }, s.ctx);
    await afterSettleGrace();
    await pastDeliveryDecisions(s);
    assertNoDelivery(s, usageCalls, "waits for agent_settled");
    await s.pi.emit("agent_settled", { aborted: false }, s.ctx);
    await eventually("the delivery", () => s.pi.sent.length === 1);
  });

  test("the typed calls of a subagent manager fill in the parent id; wait passes the session's usage", async () => {
    const s = await setup();
    await busy(s);
    s.ctx.usage = { tokens: 190_000, contextWindow: 200_000, percent: 95 };
    assert.equal((await s.adapter.started("w1", "worker one")).state, "running");
    assert.equal(s.adapter.progress("w1", "step 1 of 3"), true);
    await eventually("the progress preview", async () => (await s.adapter.check("w1")).preview.includes("step 1 of 3"));
    const done = await s.adapter.completed({ childId: "w1", status: "done", finalText: numberedReport(2_000, "w1") });
    assert.equal(done.lines, 2_000);
    const result = await s.adapter.wait(["w1"], { timeoutMs: 5_000 });
    assert.equal(result.budget.mode, "dynamic");
    assert.deepEqual(result.budget.usage, { tokens: 190_000, contextWindow: 200_000, percent: 95 });
    assert.ok(result.budget.batchCapBytes < 48 * 1024, "little headroom shrinks the batch");
    const section = result.sections[0];
    assert.equal(section?.childId, "w1");
    assert.equal(section?.truncated, true);
    const sha = section?.artifact?.sha256;
    assert.ok(sha !== undefined);
    const page = await s.adapter.artifactRead({ sha256: sha, offset: 1999 });
    assert.equal(page.text, "w1 line 1999: " + "x".repeat(40) + "\nEND w1");

    await s.adapter.started("w2");
    assert.deepEqual((await s.adapter.cancel(["w2"])).cancelled, ["w2"]);
    assert.equal((await s.adapter.check("w2")).state, "cancelled");
    const unknown = await s.adapter.check("w3").then(
      () => assert.fail("expected an error"),
      (error: unknown) => error,
    );
    assert.ok(unknown instanceof HandoffError && unknown.code === -32002);
    assert.equal(s.pi.sent.length, 0, "wait consumed the result; nothing is auto-delivered");
  });

  test("Esc just after handoffd answered a wait: its consumed results reach the session as a batch of their own", async () => {
    const s = await setup();
    await busy(s);
    await s.adapter.started("e1", "quick one");
    const abort = new AbortController();
    const waiting = s.adapter.wait(["e1"], { signal: abort.signal });
    await eventually("the wait asleep in handoffd", async () => (await s.worker.status()).waits === 1);
    // This event loop blocked: another process completes the child and handoffd answers the
    // wait; then the Esc comes before the answer is read.
    completeBlocking(s.daemon.socketPath, s.sessionId, "e1", "BEGIN e1\nthe answer written before the Esc\nEND e1");
    // handoffd writes its answer meanwhile: a margin, since this blocked process cannot watch its
    // socket (status's waits drops as the wait wakes, before the answer is written).
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 500);
    abort.abort();
    const error = await waiting.then(
      () => assert.fail("expected the wait to be aborted"),
      (e: unknown) => e,
    );
    assert.ok(error instanceof HandoffError && error.kind === "aborted");
    await eventually("the late batch to be sent to Pi", () => s.pi.sent.length === 1 || undefined, 5_000);
    const sent = s.pi.sent[0];
    assert.ok(sent !== undefined);
    assert.match(String(sent.message.content), /BEGIN e1\nthe answer written before the Esc\nEND e1/);
    assert.deepEqual(sent.options, { deliverAs: "followUp", triggerTurn: true });
    assert.deepEqual(details(s, 0).sections.map((section) => section.childId), ["e1"]);
    await eventually("the late batch to land", () => s.deliveries.some((d) => d.outcome === "delivered") || undefined, 5_000);
    const { queue } = await s.worker.status();
    assert.equal(queue.results + queue.deliveries, 0, "consumed by the wait's answer, shown once");
  });

  test("session_shutdown closes the connection and the adapter", async () => {
    const s = await setup();
    assert.equal((await s.worker.status()).connections, 2);
    await s.pi.emit("session_shutdown", { reason: "quit" }, s.ctx);
    await eventually("the daemon to see the parent leave", async () => (await s.worker.status()).connections === 1);
    const closed = await s.adapter.started("late").then(
      () => assert.fail("expected an error"),
      (error: unknown) => error,
    );
    assert.ok(closed instanceof HandoffError && closed.kind === "closed");
  });

  test("a daemon that is not running yet: the session starts anyway and connects once it is up", async () => {
    const daemon = await Daemon.start();
    await daemon.kill();
    const s = await setup({ daemon, connect: false });
    await eventually("the footer status", () => s.ctx.statuses.includes("handoff: daemon unreachable, retrying"));
    const failedAttempts = (): number => s.events.filter((e) => e.type === "connect-failed").length;
    const seen = failedAttempts();
    await eventually("three more failed attempts", () => failedAttempts() >= seen + 3);
    assert.deepEqual(s.ctx.statuses, ["handoff: daemon unreachable, retrying"], "the status is set once");
    await daemon.launch();
    await s.adapter.ready(5_000);
    await eventually("the status to clear", () => s.ctx.statuses.at(-1) === undefined);
    await s.worker.connect();
    await s.worker.completed({ parentId: s.sessionId, childId: "a", status: "done", finalText: "after all" });
    await eventually("the delivery (the initial idle state was sent on connect)", () => s.pi.sent.length === 1);
  });
});

describe("Pi adapter across daemon restarts", () => {
  test("kill -9 while a delivery is unacknowledged: reconnect, re-register, shown exactly once", async () => {
    const s = await setup();
    await busy(s);
    await s.worker.completed({ parentId: s.sessionId, childId: "a", status: "done", finalText: "result a" });
    // Pi takes the batch, but the daemon dies before the acknowledgement can reach it.
    s.pi.sendMessageImpl = (call) => {
      void s.daemon.kill().then(() => s.pi.land(call));
    };
    await settle(s);
    await eventually("the first delivery", () => s.deliveries.some((e) => e.outcome === "delivered"));
    await eventually("the lost connection", () => s.events.some((e) => e.type === "disconnected"));
    s.pi.sendMessageImpl = () => undefined;

    await s.daemon.launch();
    await eventually("the reconnection", () => s.events.some((e) => e.type === "connected" && e.reconnected));
    await eventually("the resent delivery", () => s.deliveries.some((e) => e.outcome === "duplicate"));
    await s.worker.ready(5_000);
    await queueEmpty(s.worker);
    assert.equal(s.pi.sent.length, 1, "the batch reached the session exactly once");
    const [first, second] = s.deliveries;
    assert.equal(second?.deliveryId, first?.deliveryId, "the daemon resent the same delivery");
    assert.equal(s.deliveries.length, 2);
    await eventually("the child delivered", async () => (await s.worker.status()).children.delivered === 1);
  });

  test("kill -9 with a result pending: after the restart it is delivered once, when Pi is idle", async () => {
    const s = await setup();
    await busy(s);
    await s.worker.completed({ parentId: s.sessionId, childId: "a", status: "done", finalText: "kept on disk" });
    await s.daemon.kill();
    await s.daemon.launch();
    await eventually("the reconnection", () => s.events.some((e) => e.type === "connected" && e.reconnected));
    await s.worker.ready(5_000);
    await pastDeliveryDecisions(s);
    assertNoDelivery(s, 0, "the re-sent state is busy: nothing yet");
    await settle(s);
    await eventually("the delivery", () => s.pi.sent.length === 1);
    await s.worker.ready(5_000);
    await queueEmpty(s.worker);
    // Nothing is left to deliver, and whatever handoffd sent the adapter before is read before
    // this answer on its connection: a second copy would be here now.
    await s.adapter.client?.status();
    assert.equal(s.pi.sent.length, 1);
    assert.ok((s.pi.sent[0]?.message.content as string).includes("kept on disk"));
  });

  test("after a restart the last state (idle) is sent again: a new completion is delivered at once", async () => {
    const s = await setup();
    await busy(s);
    await settle(s);
    await s.daemon.kill();
    await s.daemon.launch();
    await eventually("the reconnection", () => s.events.some((e) => e.type === "connected" && e.reconnected));
    await s.worker.ready(5_000);
    await s.worker.completed({ parentId: s.sessionId, childId: "a", status: "done", finalText: "while idle" });
    await eventually("the delivery", () => s.pi.sent.length === 1);
    await queueEmpty(s.worker);
  });
});
