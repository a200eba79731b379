// The pi-subagents bridge (src/pi-subagents-bridge.ts) with the real pi-subagents 0.67.0 inside a
// real Pi, its children real Pi processes, all on the scripted model, against a real handoffd:
// foreground runs on Pi 1.6.0, background runs on Pi 0.85.1 (pi-subagents' background runner does
// not start on 1.6.0). Both peers come pinned from test/peers (scripts/test.sh runs `npm ci` there).
//
// The scripted parent calls `subagent`, then follows the footer of what it got back with Pi's own
// `read` tool (continuing where Pi's one-page limit stops a call), so the test checks what the
// parent model really received: size, first and last lines, and the middle read back byte for byte.
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { after, before, test } from "node:test";

import { HandoffClient } from "../../src/client.js";
import { Daemon, eventually, packageRoot } from "../support/daemon.js";
import { footerReads, readPage, type ReadCall } from "../support/footer-reads.js";
import { RealPi, type PiEvent } from "../support/real-pi.js";
import { answerOfBytes } from "../support/subagent-scenario.js";
import { ScriptedModel, textOf, type ModelRequest, type Reply } from "../support/scripted-model.js";

const peers = resolve(packageRoot, "test/peers/node_modules");
const piSubagents = resolve(peers, "pi-subagents");
const pi085Cli = resolve(peers, "@earendil-works/pi-coding-agent/dist/cli.js");
const bridge = resolve(packageRoot, "dist/src/pi-subagents-bridge.js");

const KiB = 1024;
/**
 * What pi-subagents writes around a single child's answer, which the bridge keeps as it is: the
 * answer is bounded to 16 KiB, the tool result to that plus these few bytes (about 12 here).
 */
const PI_SUBAGENTS_OWN_BYTES = 256;

const bytesOf = (text: string): number => Buffer.byteLength(text, "utf8");

/** What each child answers, by a tag its task contains. */
const answers = new Map<string, Reply>();

/**
 * The parent's side of one conversation: its first reply (a `subagent` call), then, for whatever
 * result comes back (the tool result or a background notice), the reads its footer names.
 */
class Parent {
  /** The result text the model received (the last one, when several came). */
  received: string | undefined;
  /** Read ranges asked for, in footer order, with the pages that came back. */
  readonly ranges: { call: ReadCall; pages: string[] }[] = [];
  private readonly rangeOfCall = new Map<string, number>();
  private calls = 0;

  constructor(
    readonly prompt: string,
    private readonly first: Reply,
  ) {}

  reply(request: ModelRequest): Reply {
    const last = request.last;
    if (last?.role === "user" && textOf(last) === this.prompt) return this.first;
    const trailing = trailingToolResults(request);
    if (trailing.length > 0 && trailing.every((m) => this.rangeOfCall.has(String(m.tool_call_id)))) return this.continueReads(trailing);
    this.received = textOf(last);
    const reads = footerReads(this.received);
    if (reads.length === 0) return { text: "done" };
    return { toolCalls: reads.map((call) => this.readCall(call, this.ranges.push({ call, pages: [] }) - 1)) };
  }

  /** The text the footer's ranges read back, joined as the file's lines. */
  readBack(): string {
    return this.ranges.map((range) => range.pages.join("\n")).join("\n");
  }

  private continueReads(results: { tool_call_id?: unknown; content?: unknown }[]): Reply {
    const more = [];
    for (const result of results) {
      const index = this.rangeOfCall.get(String(result.tool_call_id))!;
      const range = this.ranges[index]!;
      const page = readPage(textOf(result as never));
      range.pages.push(page.text);
      const end = range.call.limit === undefined ? Infinity : range.call.offset + range.call.limit - 1;
      if (page.continueAt !== undefined && page.continueAt <= end) {
        const call: ReadCall = { path: range.call.path, offset: page.continueAt };
        if (end !== Infinity) call.limit = end - page.continueAt + 1;
        more.push(this.readCall(call, index));
      }
    }
    return more.length > 0 ? { toolCalls: more } : { text: "done" };
  }

  private readCall(call: ReadCall, range: number): { name: string; id: string; arguments: Record<string, unknown> } {
    const id = `read_${++this.calls}`;
    this.rangeOfCall.set(id, range);
    return { name: "read", id, arguments: { ...call } };
  }
}

function trailingToolResults(request: ModelRequest): ModelRequest["body"]["messages"] {
  const messages = request.body.messages;
  let from = messages.length;
  while (from > 0 && messages[from - 1]?.role === "tool") from -= 1;
  return messages.slice(from);
}

let parent: Parent | undefined;
let model: ScriptedModel;
let daemon: Daemon;

function isChild(request: ModelRequest): boolean {
  return !(request.body.tools ?? []).some((tool) => tool.function.name === "subagent");
}

before(async () => {
  for (const path of [piSubagents, pi085Cli])
    if (!existsSync(path)) throw new Error(`${path} is missing: run npm ci --prefix client/pi/test/peers (scripts/test.sh does)`);
  daemon = await Daemon.start();
  model = await ScriptedModel.start((request) => {
    if (isChild(request)) {
      for (const [tag, reply] of answers) if (request.firstUser.includes(tag)) return reply;
      return { text: `no scripted answer for: ${request.firstUser.slice(0, 200)}` };
    }
    if (parent === undefined) throw new Error("no parent conversation scripted");
    return parent.reply(request);
  });
});

after(async () => {
  await model.close();
  await daemon.dispose();
});

function startPi(options: { socketPath?: string; extensions?: string[]; piCli?: string } = {}): Promise<RealPi> {
  return RealPi.start({
    model,
    socketPath: options.socketPath ?? daemon.socketPath,
    extensions: options.extensions ?? [piSubagents, bridge],
    ...(options.piCli === undefined ? {} : { piCli: options.piCli }),
  });
}

/** Runs one prompt to its end (the parent's final "done" reply, and the run settled). */
async function converse(pi: RealPi, conversation: Parent, timeoutMs = 120_000): Promise<void> {
  parent = conversation;
  const from = pi.events.length;
  await pi.prompt(conversation.prompt);
  const done = await pi.waitFor((e) => isAssistantText(e, "done"), timeoutMs, "the parent's final answer", from);
  await pi.waitFor((e) => e.type === "agent_settled", 20_000, "the run to settle", pi.events.indexOf(done));
}

function isAssistantText(event: PiEvent, text: string): boolean {
  const message = event["message"] as { role?: string; content?: { type: string; text?: string }[] } | undefined;
  return event.type === "message_end" && message?.role === "assistant" && (message.content ?? []).some((part) => part.text === text);
}

function subagentCall(args: Record<string, unknown>): Reply {
  return { toolCalls: [{ name: "subagent", id: "sub_1", arguments: args }] };
}

/** Asserts the reads the footer named give back exactly the lines the projection left out. */
function assertMiddleReadBack(conversation: Parent, full: string): void {
  const received = conversation.received ?? "";
  assert.ok(conversation.ranges.length > 0, `the footer names read calls:\n${received.slice(-600)}`);
  const lines = full.split("\n");
  const first = conversation.ranges[0]!.call.offset;
  const lastRange = conversation.ranges[conversation.ranges.length - 1]!.call;
  const last = lastRange.limit === undefined ? lines.length : lastRange.offset + lastRange.limit - 1;
  assert.equal(conversation.readBack(), lines.slice(first - 1, last).join("\n"), "the reads give back the middle byte for byte");
  assert.ok(received.includes(lines.slice(0, first - 1).join("\n")), "the head before the first read is shown");
  assert.ok(received.includes(lines.slice(last).join("\n")), "the tail after the last read is shown");
}

test("foreground on Pi 1.6.0: a 146 KB child answer reaches the parent model bounded to 16 KiB, its middle readable; again under a reused tool call id", async () => {
  const full = answerOfBytes(146_000, "FGLONG");
  answers.set("FGLONG", { text: full });
  // The default extension is loaded too: the bridge shares its endpoint (one registration).
  const pi = await startPi({ extensions: [packageRoot, piSubagents, bridge] });
  try {
    const conversation = new Parent("bound one child", subagentCall({ agent: "delegate", task: "write FGLONG", async: false }));
    await converse(pi, conversation);
    const received = conversation.received ?? "";
    console.log(`foreground 146 KB: child answer ${bytesOf(full)} bytes -> parent model got ${bytesOf(received)} bytes, ${conversation.ranges.length} footer read range(s)`);
    assert.ok(bytesOf(received) <= 16 * KiB + PI_SUBAGENTS_OWN_BYTES, `received ${bytesOf(received)} bytes`);
    assert.ok(received.includes("BEGIN FGLONG\n") && received.includes("\nEND FGLONG"), "first and last lines are there");
    assertMiddleReadBack(conversation, full);

    const end = pi.where((e) => e.type === "tool_execution_end" && e["toolName"] === "subagent")[0];
    const result = end?.["result"] as { details?: { mode?: string; results?: { agent?: string }[] } } | undefined;
    assert.equal(result?.details?.mode, "single", "pi-subagents' details are kept");
    assert.equal(result?.details?.results?.[0]?.agent, "delegate");

    // The same tool call id again in this session (some providers reuse ids): bounded all the same.
    const again = answerOfBytes(60_000, "FGAGAIN");
    answers.set("FGAGAIN", { text: again });
    const second = new Parent("bound another child", subagentCall({ agent: "delegate", task: "write FGAGAIN", async: false }));
    await converse(pi, second);
    const secondReceived = second.received ?? "";
    assert.ok(bytesOf(secondReceived) <= 16 * KiB + PI_SUBAGENTS_OWN_BYTES, `a reused call id: received ${bytesOf(secondReceived)} bytes, ending: ${secondReceived.slice(-300)}`);
    assert.ok(secondReceived.includes("BEGIN FGAGAIN\n") && secondReceived.includes("\nEND FGAGAIN"));

    const sessionId = String((await pi.state())["sessionId"]);
    const registrations = daemon.log().split("\n").filter((line) => line.includes("parent endpoint for") && line.includes(sessionId));
    assert.equal(registrations.length, 1, `one parent endpoint for the session:\n${registrations.join("\n")}`);
  } finally {
    await pi.close();
  }
});

test("foreground on Pi 1.6.0: eight parallel children of 50 KB come back as one result within 48 KiB, the workflow's own output kept", async () => {
  const tags = Array.from({ length: 8 }, (_, i) => `PARX${i + 1}`);
  for (const tag of tags) answers.set(tag, { text: answerOfBytes(50_000, tag) });
  const children = tags.map((tag) => `{ key: "${tag.toLowerCase()}", agent: "delegate", task: "write ${tag}", async: false }`);
  const script =
    `console.log("CONSOLE-MARKER"); const results = await runs.all([${children.join(", ")}]); ` +
    `return "SCRIPT-RETURN-MARKER\\n" + results.map((r) => r.output).join("\\n\\n");`;
  const pi = await startPi();
  try {
    const conversation = new Parent("bound eight children", subagentCall({ workflowScript: script, async: false }));
    await converse(pi, conversation, 240_000);
    const received = conversation.received ?? "";
    console.log(`foreground 8 x 50 KB: child answers ${tags.length * bytesOf(answerOfBytes(50_000, tags[0]!))} bytes -> parent model got ${bytesOf(received)} bytes`);
    assert.ok(bytesOf(received) <= 48 * KiB, `received ${bytesOf(received)} bytes, ending: ${received.slice(-300)}`);
    for (const tag of tags) {
      assert.ok(received.includes(`BEGIN ${tag}\n`), `first line of ${tag}`);
      assert.ok(received.includes(`\nEND ${tag}`), `last line of ${tag}`);
    }
    // What pi-subagents wrote around the answers is still there: the script's return, console, trace.
    for (const kept of ["Workflow completed.", "Return:\nSCRIPT-RETURN-MARKER\nBEGIN PARX1\n", "Console:\n[log] CONSOLE-MARKER", "Call trace:\n"])
      assert.ok(received.includes(kept), `kept ${JSON.stringify(kept)}`);
  } finally {
    await pi.close();
  }
});

test("without the bridge, pi-subagents passes 146 KB (foreground and background) and 8 x 50 KB to the parent model whole (the baseline)", async () => {
  answers.set("BASELONG", { text: answerOfBytes(146_000, "BASELONG") });
  const tags = Array.from({ length: 8 }, (_, i) => `BASEPAR${i + 1}`);
  for (const tag of tags) answers.set(tag, { text: answerOfBytes(50_000, tag) });
  const children = tags.map((tag) => `{ key: "${tag.toLowerCase()}", agent: "delegate", task: "write ${tag}", async: false }`);
  const pi = await startPi({ extensions: [piSubagents] });
  try {
    const single = new Parent("baseline one", subagentCall({ agent: "delegate", task: "write BASELONG", async: false }));
    await converse(pi, single);
    const parallel = new Parent("baseline eight", subagentCall({ workflowScript: `const results = await runs.all([${children.join(", ")}]); return results.map((r) => r.output);`, async: false }));
    await converse(pi, parallel, 240_000);
    const one = bytesOf(single.received ?? "");
    const eight = bytesOf(parallel.received ?? "");
    console.log(`baseline without the bridge, foreground (Pi 1.6.0): 146 KB child -> parent model got ${one} bytes; 8 x 50 KB -> ${eight} bytes`);
    assert.ok(one > 146_000 && eight > 8 * 50_000, "pi-subagents does not bound them itself");
  } finally {
    await pi.close();
  }
  answers.set("BASEBG", { text: answerOfBytes(146_000, "BASEBG") });
  const background = await startPi({ extensions: [piSubagents], piCli: pi085Cli });
  try {
    const conversation = new Parent("baseline background", subagentCall({ agent: "delegate", task: "write BASEBG", async: true }));
    parent = conversation;
    await background.prompt(conversation.prompt);
    const notice = await background.waitFor(
      (e) => e.type === "message_end" && (e["message"] as { customType?: string }).customType === "subagent-notify",
      120_000,
      "the subagent-notify message",
    );
    await background.waitFor((e) => isAssistantText(e, "done"), 60_000, "the answer to the notice", background.events.indexOf(notice));
    const bytes = bytesOf(conversation.received ?? "");
    console.log(`baseline without the bridge, background (Pi 0.85.1): 146 KB child -> parent model got ${bytes} bytes`);
    assert.ok(bytes > 146_000, "pi-subagents does not bound it itself");
  } finally {
    await background.close();
  }
});

test("foreground on Pi 1.6.0: a short answer passes byte for byte, without handoff", async () => {
  const short = "SHORTANSWER first line\nsecond line\nSHORTANSWER last line";
  answers.set("SHORTANSWER", { text: short });
  const own = await Daemon.start();
  const pi = await startPi({ socketPath: own.socketPath });
  try {
    const conversation = new Parent("a short one", subagentCall({ agent: "delegate", task: "write SHORTANSWER", async: false }));
    await converse(pi, conversation);
    const received = conversation.received ?? "";
    assert.ok(received.includes(short), received);
    assert.doesNotMatch(received, /Subagent |\[handoff:/);
    const end = pi.where((e) => e.type === "tool_execution_end" && e["toolName"] === "subagent")[0];
    const shown = ((end?.["result"] as { content: { text: string }[] }).content[0] as { text: string }).text;
    assert.equal(received, shown, "the model read pi-subagents' own text");
    // handoffd never heard of the child.
    const client = new HandoffClient({ socketPath: own.socketPath, reconnect: false });
    try {
      await client.connect();
      const status = await client.status();
      assert.deepEqual(status.children, { running: 0, completed: 0, delivering: 0, delivered: 0 });
    } finally {
      client.close();
    }
  } finally {
    await pi.close();
    await own.dispose();
  }
});

test("background on Pi 0.85.1: a 146 KB answer arrives within 24 KiB with the notice's first line, and only once", async () => {
  const full = answerOfBytes(146_000, "BGLONG");
  answers.set("BGLONG", { text: full, delayMs: 3000 });  // long enough to see it running
  const own = await Daemon.start();
  const pi = await startPi({ socketPath: own.socketPath, piCli: pi085Cli });
  try {
    const conversation = new Parent("bound a background child", subagentCall({ agent: "delegate", task: "write BGLONG", async: true }));
    parent = conversation;
    await pi.prompt(conversation.prompt);
    // subagent:async-started reached handoffd: the run shows as running there.
    const client = new HandoffClient({ socketPath: own.socketPath, reconnect: false });
    await client.connect();
    await eventually("the background run reported started", async () => (await client.status()).children.running === 1 || undefined, 60_000);
    // The launch receipt ends the first run ("done"); the notice later triggers a run of its own.
    const notice = await pi.waitFor(
      (e) => e.type === "message_end" && (e["message"] as { customType?: string }).customType === "subagent-notify",
      120_000,
      "the subagent-notify message",
    );
    await pi.waitFor((e) => isAssistantText(e, "done"), 60_000, "the answer after reading", pi.events.indexOf(notice));
    const received = conversation.received ?? "";
    console.log(`background 146 KB: child answer ${bytesOf(full)} bytes -> parent model got ${bytesOf(received)} bytes, ${conversation.ranges.length} footer read range(s)`);
    assert.ok(bytesOf(received) <= 24 * KiB, `received ${bytesOf(received)} bytes`);
    assert.match(received.split("\n")[0] ?? "", /^Background task completed: \*\*delegate\*\*/, "the renderer's first line is kept");
    assert.ok(received.includes("BEGIN BGLONG\n") && received.includes("\nEND BGLONG"), "first and last lines are there");
    // pi-subagents' notice carries the run's summary, `agent:` and then the answer: that is what
    // handoff holds and the footer reads from.
    assertMiddleReadBack(conversation, `delegate:\n${full}`);

    // Consumed by the bridge's wait: handoffd holds nothing more to deliver (no result, no delivery
    // awaiting its acknowledgement), so no second delivery can come on idle; and none came before.
    const status = await client.status();
    client.close();
    assert.deepEqual(status.children, { running: 0, completed: 0, delivering: 0, delivered: 1 }, "started, then delivered once");
    assert.equal(status.queue.results, 0);
    assert.equal(status.queue.deliveries, 0);
    await pi.state();  // every event Pi wrote before this answer has been read
    assert.equal(pi.where((e) => e.type === "message_end" && (e["message"] as { customType?: string }).customType === "handoff").length, 0);
  } finally {
    await pi.close();
    await own.dispose();
  }
});

test("foreground with handoffd stopped: the bridge bounds the answer itself, the one line names its private copy, the middle reads back from it", async () => {
  const full = answerOfBytes(146_000, "DOWNLONG");
  answers.set("DOWNLONG", { text: full });
  const down = await Daemon.start();
  const pi = await startPi({ socketPath: down.socketPath });
  try {
    await down.stop();
    const conversation = new Parent("handoffd is gone", subagentCall({ agent: "delegate", task: "write DOWNLONG", async: false }));
    await converse(pi, conversation);
    const received = conversation.received ?? "";
    console.log(`foreground 146 KB, handoffd stopped: parent model got ${bytesOf(received)} bytes, ${conversation.ranges.length} footer read range(s)`);
    assert.ok(bytesOf(received) <= 16 * KiB + PI_SUBAGENTS_OWN_BYTES, `received ${bytesOf(received)} bytes`);
    assert.ok(received.includes("BEGIN DOWNLONG\n") && received.includes("\nEND DOWNLONG"), "first and last lines are there");
    const line = /\[handoff: handoff's daemon was not reached \(handoffd is not connected\); the head and tail above were cut by the hook itself, the full text \([\d,]+ bytes\) is in (\S+)\]/.exec(received);
    assert.ok(line !== null, received.slice(-500));
    assert.ok(line[1]?.startsWith(join(pi.home, ".cache", "handoff", "unbounded") + "/"), line[1]);
    assert.equal(readFileSync(line[1] as string, "utf8"), full, "the private copy is the answer");
    assert.ok(!received.includes("[handoff: this result was not bounded"));
    assertMiddleReadBack(conversation, full);
  } finally {
    await pi.close();
    await down.dispose();
  }
});
