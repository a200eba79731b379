// The bridge's background path on a grouped notice (two runs in one `subagent-notify`), and the
// shared session endpoint, against a real handoffd. The event bus is Node's EventEmitter, as Pi's
// is; Pi itself is the real-Pi test's business (real-pi/pi-subagents.test.ts).
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { EventEmitter } from "node:events";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";

import { HandoffClient } from "../src/client.js";
import { createHandoffAdapter } from "../src/pi-adapter.js";
import { createPiSubagentsBridge } from "../src/pi-subagents-bridge.js";
import { sessionAdapter } from "../src/session-endpoint.js";
import { Daemon, eventually, numberedReport } from "./support/daemon.js";
import { FakeContext, FakePi } from "./support/fake-pi.js";

let daemon: Daemon;

before(async () => {
  daemon = await Daemon.start();
});

after(async () => {
  await daemon.dispose();
});

/** Pi's event bus: an EventEmitter whose handlers run synchronously on emit. */
function bus(): { emit(channel: string, data: unknown): void; on(channel: string, handler: (data: unknown) => void): () => void } {
  const emitter = new EventEmitter();
  return {
    emit: (channel, data) => void emitter.emit(channel, data),
    on: (channel, handler) => {
      emitter.on(channel, handler);
      return () => void emitter.off(channel, handler);
    },
  };
}

function piWith(events: ReturnType<typeof bus>): FakePi & { events: ReturnType<typeof bus> } {
  return Object.assign(new FakePi(), { events });
}

test("a grouped background notice: each run is one section under the header, consumed once", async () => {
  const events = bus();
  const pi = piWith(events);
  const bridge = createPiSubagentsBridge(pi as never, { socketPath: daemon.socketPath });
  const ctx = new FakeContext("grouped-parent");
  ctx.idle = false;
  await pi.emit("session_start", {}, ctx);
  await bridge.adapter.ready(5_000);
  const client = new HandoffClient({ socketPath: daemon.socketPath, reconnect: false });
  await client.connect();
  try {
    events.emit("subagent:async-started", { id: "r1", agent: "scout" });
    events.emit("subagent:async-started", { id: "r2", agent: "worker" });
    await eventually("both runs started at handoffd", async () => (await client.status()).children.running === 2 || undefined);

    const one = `scout:\n${numberedReport(600, "RUNONE")}`;
    const two = `worker:\n${numberedReport(600, "RUNTWO")}`;
    events.emit("subagent:async-complete", { id: "r1", agent: "scout", success: true, summary: one });
    events.emit("subagent:async-complete", { id: "r2", agent: "worker", success: false, summary: two });
    const notice = `Background tasks completed (2): **scout**, **worker**\n\n1. scout\n${one}\n\n2. worker\n${two}\n\nSession file: /s.jsonl`;
    const text = await bridge.boundBackground(notice);

    assert.ok(text !== undefined && Buffer.byteLength(text) <= 48 * 1024, `${text?.length} chars`);
    assert.equal(text.split("\n")[0], "Background tasks completed (2): **scout**, **worker**");
    for (const tag of ["RUNONE", "RUNTWO"]) assert.ok(text.includes(`BEGIN ${tag}`) && text.includes(`END ${tag}`), tag);
    assert.match(text, /Subagent async\/r1 "scout" finished\./);
    assert.match(text, /Subagent async\/r2 "worker" failed\./);
    assert.ok(text.endsWith("1. scout\n\n2. worker\n\nSession file: /s.jsonl"), "pi-subagents' own lines follow the batch");
    assert.doesNotMatch(text, /\[handoff:/);
    const status = await client.status();
    assert.deepEqual(status.children, { running: 0, completed: 0, delivering: 0, delivered: 2 });
  } finally {
    client.close();
    bridge.adapter.dispose();
  }
});

test("one adapter per session bus: the second extension reuses the first one's, another session has its own", () => {
  const first = bus();
  const second = bus();
  const made: string[] = [];
  const make = (name: string) => () => {
    made.push(name);
    return createHandoffAdapter(new FakePi(), { socketPath: daemon.socketPath });
  };
  const a = sessionAdapter({ events: first } as never, make("a"));
  const b = sessionAdapter({ events: first } as never, make("b"));
  const c = sessionAdapter({ events: second } as never, make("c"));
  assert.equal(a, b);
  assert.notEqual(a, c);
  assert.deepEqual(made, ["a", "c"]);
  for (const adapter of [a, c]) adapter.dispose();
});

test("handoffd not connected: the notice is bounded by the bridge itself, head and tail, the full text in a private copy", async () => {
  const pi = piWith(bus());
  const bridge = createPiSubagentsBridge(pi as never, { socketPath: `${daemon.dir}/nobody.sock` });
  await pi.emit("session_start", {}, new FakeContext("lonely-parent"));
  const body = numberedReport(600, "ALONE");
  const notice = `Background task completed: **scout**\n\n${body}`;
  const cache = mkdtempSync(join(tmpdir(), "handoff-bridge-cache-"));
  const saved = process.env["XDG_CACHE_HOME"];
  process.env["XDG_CACHE_HOME"] = cache;
  try {
    const text = await bridge.boundBackground(notice);
    assert.ok(text !== undefined && Buffer.byteLength(text) <= 16 * 1024 + 256, `${text?.length} chars`);
    assert.equal(text.split("\n")[0], "Background task completed: **scout**");
    assert.ok(text.includes("\nBEGIN ALONE\n") && text.includes("\nEND ALONE\n[Truncated: "), "head and tail");
    const line = /\n\n\[handoff: handoff's daemon was not reached \(handoffd is not connected\); the head and tail above were cut by the hook itself, the full text \(([\d,]+) bytes\) is in (\S+)\]$/.exec(text);
    assert.ok(line !== null, text.slice(-300));
    assert.equal(line[2], join(cache, "handoff", "unbounded", `${createHash("sha256").update(body).digest("hex")}.txt`));
    assert.equal(readFileSync(line[2] as string, "utf8"), body);
  } finally {
    if (saved === undefined) delete process.env["XDG_CACHE_HOME"];
    else process.env["XDG_CACHE_HOME"] = saved;
    rmSync(cache, { recursive: true, force: true });
    bridge.adapter.dispose();
  }
});

test("handoffd not connected and no private copy possible: the notice passes whole with one note line", async () => {
  const pi = piWith(bus());
  const bridge = createPiSubagentsBridge(pi as never, { socketPath: `${daemon.dir}/nobody.sock` });
  await pi.emit("session_start", {}, new FakeContext("lonely-parent-2"));
  const notice = `Background task completed: **scout**\n\n${numberedReport(600, "ALONE")}`;
  const saved = { cache: process.env["XDG_CACHE_HOME"], home: process.env["HOME"] };
  delete process.env["XDG_CACHE_HOME"];
  delete process.env["HOME"];
  try {
    const text = await bridge.boundBackground(notice);
    assert.ok(text?.startsWith(`${notice}\n\n[handoff: this result was not bounded (handoffd is not connected)`), text?.slice(-200));
    assert.equal(text!.split("\n").filter((line) => line.startsWith("[handoff:")).length, 1);
  } finally {
    for (const [name, value] of [["XDG_CACHE_HOME", saved.cache], ["HOME", saved.home]] as const) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
    bridge.adapter.dispose();
  }
});
