// Issue 46 in a real Pi 1.6.0: the verdict survives handoffd being unavailable, and a shell with
// neither XDG_RUNTIME_DIR nor HANDOFF_SOCKET gets bounded results through an autostarted daemon.
//
// 1. No daemon and autostart off: a spawned child's 171 KB answer comes back from subagent_wait
//    cut by the extension itself (src/local-bound.ts) within 16 KiB, with its head and its tail
//    (the verdict), the hook core's one line, and a footer whose `read` calls, made by the model
//    with Pi's own read tool, give back exactly the omitted lines from the private copy (0600 in a
//    0700 ${XDG_CACHE_HOME}/handoff/unbounded). A second wait finds nothing: delivered once.
//    The same when the parent is idle: the result comes as a delivery of the extension's own.
// 2. Neither XDG_RUNTIME_DIR nor HANDOFF_SOCKET, autostart on: the extension starts handoffd on
//    ${TMPDIR}/handoff-UID/handoffd.sock (made 0700) and the answer arrives bounded by it.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, test } from "node:test";

import { eventually, handoffdPath } from "../support/daemon.js";
import { footerReads, readPage } from "../support/footer-reads.js";
import { RealPi } from "../support/real-pi.js";
import { ScriptedModel, textOf, type Script } from "../support/scripted-model.js";
import { deliveredBatches, exactReport, parentRequests, toolEnd, toolText } from "../support/subagent-scenario.js";

const KiB = 1024;
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** The parent's script: spawn, wait, then the footer's read calls, then wait once more. */
function parentScript(report: string, title: string): Script {
  return (request) => {
    if (request.firstUser.startsWith("CHILD")) return { text: report };
    const last = request.last;
    const text = textOf(last);
    if (last?.role === "user") return { toolCalls: [{ name: "subagent_spawn", arguments: { task: "CHILD write the long report", title } }] };
    if (last?.role === "tool" && text.includes("Started subagent")) return { toolCalls: [{ name: "subagent_wait", arguments: {} }] };
    if (last?.role === "tool" && text.includes(`"${title}" finished.`)) {
      const reads = footerReads(beforeLine(text));
      // Each page's call has an id (page-1, page-2, ...): Pi runs them at once and they end in any order.
      if (reads.length > 0) return { toolCalls: reads.map((call, at) => ({ name: "read", id: pageId(at), arguments: { ...call } })) };
    }
    if (last?.role === "tool" && !text.includes("No subagent of this session")) return { toolCalls: [{ name: "subagent_wait", arguments: {} }] };
    return { text: "done" };
  };
}

/** The id of the read call for the footer's page `at` (0-based). */
function pageId(at: number): string {
  return `page-${at + 1}`;
}

/** A result without the one line after its footer (which names the copy too). */
function beforeLine(text: string): string {
  const at = text.lastIndexOf("\n\n[handoff: ");
  return at < 0 ? text : text.slice(0, at);
}

/** Live handoffd processes serving `socket`. */
function daemonsServing(socket: string): number[] {
  const pids: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const args = readFileSync(`/proc/${name}/cmdline`, "utf8").split("\0");
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      if (stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z" && args.includes(`--socket=${socket}`)) pids.push(Number(name));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

test("handoffd unavailable (no daemon, autostart off): the 171 KB answer arrives with head, verdict, the one line, and read pages of exactly the omitted lines", async () => {
  const dir = tempDir("handoff-unavail-");
  const cache = join(dir, "cache");
  const report = exactReport(171_000, 3_000, "gone");
  const model = await ScriptedModel.start(parentScript(report, "Long report"));
  cleanups.push(() => model.close());
  const pi = await RealPi.start({
    model,
    socketPath: join(dir, "no-daemon", "handoffd.sock"),  // nothing listens, and nothing starts one
    env: { HANDOFF_AUTOSTART: "0", HANDOFF_SUBAGENT_ARGS: "-ne", XDG_CACHE_HOME: cache },
  });
  cleanups.push(() => pi.close());
  await pi.prompt("PARENT please delegate");
  const waited = await toolEnd(pi, "subagent_wait", 90_000);
  const seen = toolText(waited);
  assert.equal(waited["isError"], false, seen);
  assert.ok(Buffer.byteLength(seen) <= 16 * KiB, `wait result ${Buffer.byteLength(seen)} B within 16 KiB`);
  assert.match(seen, /^Subagent sa-[0-9a-f]+ "Long report" finished\.\n\nBEGIN gone\n/, "the head");
  assert.match(seen, /\nEND gone\n\[Truncated: 171,000 bytes \/ 3000 lines in full; shown: /, "the tail: the verdict");
  const sha = createHash("sha256").update(report).digest("hex");
  const copy = join(cache, "handoff", "unbounded", `${sha}.txt`);
  const line = /\n\n(\[handoff: handoff's daemon was not reached \((.*)\); the head and tail above were cut by the hook itself, the full text \(171,000 bytes\) is in (.*)\])$/.exec(seen);
  assert.ok(line !== null, `the one line ends the result: ${seen.slice(-400)}`);
  assert.match(line[2] ?? "", /no-daemon\/handoffd.sock.*ENOENT/);
  assert.equal(line[3], copy);
  assert.equal(readFileSync(copy, "utf8"), report, "the private copy is the full text");
  assert.equal(statSync(copy).mode & 0o777, 0o600);
  assert.equal(statSync(join(cache, "handoff", "unbounded")).mode & 0o777, 0o700);

  // The model follows the footer with Pi's read: each page whole, together exactly the omitted lines.
  const calls = footerReads(beforeLine(seen));
  assert.ok(calls.length >= 2 && calls.every((call) => call.path === copy), JSON.stringify(calls));
  const again = await toolEnd(pi, "subagent_wait", 60_000, pi.events.indexOf(waited) + 1);
  const ends = pi.where((e) => e.type === "tool_execution_end" && e["toolName"] === "read");
  assert.equal(ends.length, calls.length);
  // In the footer's order: Pi runs the calls at once, and they end in whatever order they finish.
  const pages = calls.map((_, at) => {
    const end = ends.find((e) => e["toolCallId"] === pageId(at));
    assert.ok(end !== undefined, `the end of read call ${pageId(at)}`);
    assert.equal(end["isError"], false, toolText(end));
    const page = readPage(toolText(end));
    // "[N more lines in file. ...]" only says the limit stopped before the end; "[Showing lines ...]" is a cut.
    assert.ok(!toolText(end).includes("\n\n[Showing lines "), "no page is cut by Pi");
    return page.text;
  });
  const lines = report.split("\n");
  const first = calls[0]?.offset ?? 0;
  const last = (calls.at(-1)?.offset ?? 0) + (calls.at(-1)?.limit ?? 0) - 1;
  assert.equal(pages.join("\n"), lines.slice(first - 1, last).join("\n"), "the pages are exactly the omitted lines");
  assert.ok(seen.includes(`${lines.slice(0, first - 1).join("\n")}\n[... middle omitted: lines ${first}-${last} of 3000, `), "the head ends where the pages start");
  assert.ok(seen.includes(`...]\n${lines.slice(last).join("\n")}\n[Truncated: `), "the tail starts where the pages end");

  // Delivered once: the second wait (after the reads) has nothing left.
  assert.equal(toolText(again), "No subagent of this session has a result you have not received.");
  await pi.waitFor((e) => e.type === "agent_settled", 30_000, "the parent to settle", pi.events.indexOf(again));
  assert.equal(parentRequests(model, "PARENT").at(-1)?.last?.role, "tool");
  console.log(`# ${seen.slice(seen.lastIndexOf("[Truncated: ")).replaceAll("\n", "\n# ")}`);
  console.log(`# without handoffd: the wait's result is ${Buffer.byteLength(seen)} B for a 171,000-byte answer, ${calls.length} read calls`);
});

test("handoffd unavailable and the parent idle: the 146 KB answer is delivered into the session by the extension, bounded, once", async () => {
  const dir = tempDir("handoff-unavail-idle-");
  const cache = join(dir, "cache");
  const report = exactReport(146_000, 2_600, "idle");
  const model = await ScriptedModel.start((request) => {
    if (request.firstUser.startsWith("CHILD")) return { text: report, delayMs: 1_500 };  // ends after the parent settled
    const last = request.last;
    if (last?.role === "user" && textOf(last).startsWith("PARENT"))
      return { toolCalls: [{ name: "subagent_spawn", arguments: { task: "CHILD write it", title: "Idle report" } }] };
    return { text: "noted" };
  });
  cleanups.push(() => model.close());
  const pi = await RealPi.start({
    model,
    socketPath: join(dir, "no-daemon", "handoffd.sock"),
    env: { HANDOFF_AUTOSTART: "0", HANDOFF_SUBAGENT_ARGS: "-ne", XDG_CACHE_HOME: cache },
  });
  cleanups.push(() => pi.close());
  await pi.prompt("PARENT delegate and go idle");
  const settled = await pi.waitFor((e) => e.type === "agent_settled", 30_000, "the parent to settle");
  const landed = await pi.waitFor(
    (e) => e.type === "message_end" && (e["message"] as { customType?: string }).customType === "handoff",
    60_000,
    "the delivery made without handoffd",
    pi.events.indexOf(settled),
  );
  const batches = deliveredBatches(pi);
  assert.equal(batches.length, 1);
  const text = batches[0]?.text ?? "";
  assert.ok(Buffer.byteLength(text) <= 24 * KiB, `delivered ${Buffer.byteLength(text)} B within the auto-delivery's 24 KiB`);
  assert.match(text, /^Subagent sa-[0-9a-f]+ "Idle report" finished\.\n\nBEGIN idle\n/);
  assert.match(text, /\nEND idle\n\[Truncated: 146,000 bytes \/ 2600 lines in full; shown: /);
  const copy = join(cache, "handoff", "unbounded", `${createHash("sha256").update(report).digest("hex")}.txt`);
  assert.ok(text.endsWith(`; the head and tail above were cut by the hook itself, the full text (146,000 bytes) is in ${copy}]`), text.slice(-300));
  assert.match(text, /\n\n\[handoff: handoff's daemon was not reached \(cannot reach handoffd at [^)]*: ENOENT\); /);
  assert.equal(readFileSync(copy, "utf8"), report);
  // The delivery starts a turn: the model reads it, and it comes once.
  await pi.waitFor((e) => e.type === "agent_settled", 30_000, "the run the delivery triggered", pi.events.indexOf(landed));
  assert.ok((parentRequests(model, "PARENT").at(-1)?.body.messages ?? []).map(textOf).some((m) => m.includes("\nEND idle\n")));
  // Nothing left to deliver (the extension's status line, which names pending turns, clear), then
  // a round trip to Pi: a second delivery would need a result still held.
  await eventually("the extension's subagents status line to clear", () => {
    const line = pi.where((e) => e.type === "extension_ui_request" && e["statusKey"] === "handoff-subagents").at(-1);
    return line?.["statusText"] === undefined || undefined;
  }, 30_000);
  await pi.state();
  assert.equal(deliveredBatches(pi).length, 1, "delivered once");
  console.log(`# without handoffd, idle: the delivery is ${Buffer.byteLength(text)} B for a 146,000-byte answer`);
});

test("neither XDG_RUNTIME_DIR nor HANDOFF_SOCKET, autostart on: handoffd starts on ${TMPDIR}/handoff-UID/handoffd.sock and bounds the answer", async () => {
  const tmp = tempDir("handoff-noxdg-");
  const socket = join(tmp, `handoff-${process.getuid?.() ?? 0}`, "handoffd.sock");
  cleanups.push(() => {
    for (const pid of daemonsServing(socket)) process.kill(pid, "SIGKILL");
  });
  const report = exactReport(171_000, 3_000, "noxdg");
  const model = await ScriptedModel.start(parentScript(report, "No runtime dir"));
  cleanups.push(() => model.close());
  const pi = await RealPi.start({
    model,
    // No socketPath: RealPi then sets no HANDOFF_SOCKET, and it passes no XDG_RUNTIME_DIR.
    env: { HANDOFF_AUTOSTART: "1", HANDOFF_DAEMON: handoffdPath(), TMPDIR: tmp, HANDOFF_SUBAGENT_ARGS: "-ne" },
  });
  cleanups.push(() => pi.close());
  const environ = readFileSync(`/proc/${pi.pid}/environ`, "utf8").split("\0");
  assert.ok(!environ.some((entry) => entry.startsWith("XDG_RUNTIME_DIR=") || entry.startsWith("HANDOFF_SOCKET=")), "Pi runs with neither");
  await pi.prompt("PARENT please delegate");
  const waited = await toolEnd(pi, "subagent_wait", 90_000);
  const seen = toolText(waited);
  assert.ok(Buffer.byteLength(seen) <= 16 * KiB, `wait result ${Buffer.byteLength(seen)} B within 16 KiB`);
  assert.match(seen, /^Subagent sa-[0-9a-f]+ "No runtime dir" finished\.\n\nBEGIN noxdg\n/);
  assert.match(seen, /\nEND noxdg\n\[Truncated: /);
  assert.ok(seen.includes(`Full text: ${join(pi.home, ".cache", "handoff", "results")}/`), `handoffd's store: ${seen.slice(-300)}`);
  assert.ok(!seen.includes("daemon was not reached"), "bounded by handoffd, not by the extension");
  assert.equal(daemonsServing(socket).length, 1, "one daemon, on the private fallback");
  assert.ok(statSync(socket).isSocket());
  assert.equal(statSync(join(tmp, `handoff-${process.getuid?.() ?? 0}`)).mode & 0o777, 0o700);
  console.log(`# with handoffd (no XDG_RUNTIME_DIR): the wait's result is ${Buffer.byteLength(seen)} B for a 171,000-byte answer`);
});
