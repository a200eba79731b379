// The Pi extension's own bounding for when no handoffd can be had (src/local-bound.ts,
// src/local-projection.ts): the projection byte for byte the daemon's (`handoff project
// --no-outline` of the build), the one line of the C++ hook core, the footer's read calls giving
// back exactly the omitted lines under Pi's read rules, the wait's caps shared by several
// results, and the private copy: 0600 in a 0700 directory, never written through a symlink or
// into a directory open to others (the result is then kept, not lost).
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { chmodSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterEach, test } from "node:test";

import { cutLine, localBatch, oneLine, passesWholeLine, unboundedDir, whyNotReached, WAIT_CAPS } from "../src/local-bound.js";
import { project } from "../src/local-projection.js";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "handoff-local-bound-"));
  dirs.push(dir);
  return dir;
}

/** $HANDOFF_CLI, else the build's `handoff` beside $HANDOFFD, else ../../build/client/handoff. */
function handoffCli(): string {
  const daemon = process.env["HANDOFFD"];
  const cli = process.env["HANDOFF_CLI"] ?? (daemon !== undefined ? resolve(daemon, "../../client/handoff") : resolve(import.meta.dirname, "../../../../build/client/handoff"));
  if (!existsSync(cli)) throw new Error(`handoff not found at ${cli}: build it, or set HANDOFF_CLI`);
  return cli;
}

/** `BEGIN tag`, `lines - 2` numbered lines of filler, `END tag`: `bytes` bytes in all. */
function report(bytes: number, lines: number, tag: string): string {
  const middle = Array.from({ length: lines - 2 }, (_, i) => `${tag} line ${i + 2}: `);
  const fixed = `BEGIN ${tag}`.length + `END ${tag}`.length + middle.reduce((sum, line) => sum + line.length, 0) + lines - 1;
  const each = Math.floor((bytes - fixed) / middle.length);
  const spare = bytes - fixed - each * middle.length;
  const text = [`BEGIN ${tag}`, ...middle.map((line, i) => line + "x".repeat(each + (i < spare ? 1 : 0))), `END ${tag}`].join("\n");
  assert.equal(Buffer.byteLength(text), bytes);
  return text;
}

/** Pi 1.6.0's read of `path` (offset, limit), refusing what it would cut: the test wants every call whole. */
function piRead(path: string, offset: number, limit: number | undefined): string {
  const lines = readFileSync(path, "utf8").split("\n");
  assert.ok(offset >= 1 && offset <= lines.length, `offset ${offset} within the file's ${lines.length} lines`);
  const selected = lines.slice(offset - 1, limit === undefined ? undefined : offset - 1 + limit);
  const text = selected.join("\n");
  const counted = text.endsWith("\n") ? selected.length - 1 : selected.length;
  assert.ok(counted <= 2000 && Buffer.byteLength(text) <= 50 * 1024, `read offset=${offset} limit=${limit} is shown whole`);
  return text;
}

/** The footer's read calls, run: their lines must be exactly the omitted ones the marker names. */
function followFooter(section: string, full: string): void {
  const path = /Full text: (\S+) \u2014 omitted lines? (\d+)(?:-(\d+))? in \d+ calls?, each shown whole: ([^\n]*)\.\]/.exec(section);
  assert.ok(path !== null, `the footer lists read calls: ${section.slice(-600)}`);
  const first = Number(path[2]);
  const last = Number(path[3] ?? path[2]);
  const calls = [...(path[4] ?? "").matchAll(/read offset=(\d+) limit=(\d+)/g)].map((m) => ({ offset: Number(m[1]), limit: Number(m[2]) }));
  assert.ok(calls.length > 0);
  let next = first;
  const pages: string[] = [];
  for (const call of calls) {
    assert.equal(call.offset, next, "the calls are contiguous");
    pages.push(piRead(path[1] as string, call.offset, call.limit));
    next += call.limit;
  }
  assert.equal(next, last + 1, "the calls end at the last omitted line");
  const lines = full.split("\n");
  assert.equal(pages.join("\n"), lines.slice(first - 1, last).join("\n"), "the pages are exactly the omitted lines");
  assert.ok(section.includes(`${lines.slice(0, first - 1).join("\n")}\n[... middle omitted: `), "the head is lines 1..first-1");
  assert.ok(section.includes(`...]\n${lines.slice(last).join("\n")}\n[Truncated: `), "the tail is lines last+1..end");
}

test("a 171 KB answer: head, tail (the verdict), footer, the one line, within 16 KiB; its private copy 0600 in 0700", () => {
  const dir = join(tempDir(), "cache", "handoff", "unbounded");
  const full = report(171_000, 3_000, "long");
  const batch = localBatch([{ childId: "sa-000001", title: "Long report", status: "done", finalText: full }], { reason: "connect ENOENT /run/x.sock", dir, cli: undefined });
  assert.deepEqual(batch.delivered, ["sa-000001"]);
  assert.deepEqual(batch.kept, []);
  const [section] = batch.sections;
  assert.ok(section !== undefined && section.truncated && section.artifact?.saved === true);
  const path = section.artifact.path as string;
  assert.equal(path, join(dir, `${section.artifact.sha256}.txt`));
  assert.equal(readFileSync(path, "utf8"), full, "the copy is the full text");
  assert.equal(statSync(path).mode & 0o777, 0o600);
  assert.equal(statSync(dir).mode & 0o777, 0o700);
  assert.deepEqual(readdirSync(dir), [`${section.artifact.sha256}.txt`], "no temporary file left");
  assert.ok(Buffer.byteLength(section.text) <= WAIT_CAPS.perResultBytes, `${Buffer.byteLength(section.text)} B`);
  assert.ok(section.text.split("\n").length <= WAIT_CAPS.maxLines);
  assert.ok(batch.text.startsWith('Subagent sa-000001 "Long report" finished.\n\nBEGIN long\n'));
  const line = `[handoff: handoff's daemon was not reached (connect ENOENT /run/x.sock); the head and tail above were cut by the hook itself, the full text (171,000 bytes) is in ${path}]`;
  assert.ok(section.text.includes("\nEND long\n[Truncated: 171,000 bytes / 3000 lines in full; shown: "), "the tail, then the footer");
  assert.ok(batch.text.endsWith(`.]\n\n${line}`), "the footer, then the one line");
  followFooter(section.text, full);
  assert.equal(section.omitted?.offset, Number(/omitted lines (\d+)-/.exec(section.text)?.[1]));
});

test("a result that fits passes whole, with the line; an empty one too", () => {
  const batch = localBatch(
    [
      { childId: "sa-1", title: "Short", status: "done", finalText: "all good\nverdict: ship it" },
      { childId: "sa-2", title: "", status: "error", error: "exit 1", finalText: "" },
    ],
    { reason: "no daemon", dir: join(tempDir(), "u") },
  );
  const why = whyNotReached("no daemon");
  assert.equal(
    batch.text,
    `Subagent sa-1 "Short" finished.\n\nall good\nverdict: ship it\n\n${passesWholeLine(why)}\n\n---\n\nSubagent sa-2 failed.\nError: exit 1\n\n\n\n${passesWholeLine(why)}`,
  );
  assert.equal(passesWholeLine(why), "[handoff: handoff's daemon was not reached (no daemon); the result passes whole]");
  assert.deepEqual(batch.delivered, ["sa-1", "sa-2"]);
  assert.equal(batch.sections.filter((s) => s.truncated).length, 0);
});

test("several long results share the wait's 48 KiB; each keeps its head and tail", () => {
  const dir = join(tempDir(), "u");
  const texts = [0, 1, 2, 3].map((i) => report(150_000 + i * 7_000, 2_000 + i * 300, `r${i}`));
  const batch = localBatch(texts.map((finalText, i) => ({ childId: `sa-${i}`, title: `R${i}`, status: "done" as const, finalText })), { reason: "down", dir, cli: undefined });
  assert.ok(Buffer.byteLength(batch.text) <= WAIT_CAPS.perBatchBytes, `${Buffer.byteLength(batch.text)} B`);
  assert.equal(batch.deferred, 0);
  assert.deepEqual(batch.delivered, ["sa-0", "sa-1", "sa-2", "sa-3"]);
  for (const [i, section] of batch.sections.entries()) {
    assert.ok(Buffer.byteLength(section.text) < WAIT_CAPS.perBatchBytes / 4, "an equal share each");
    assert.ok(section.text.startsWith(`BEGIN r${i}\n`) && section.text.includes(`\nEND r${i}\n[Truncated: `));
    followFooter(section.text, texts[i] as string);
  }
});

test("more results than the batch holds at their floor: the first ones go, the rest are kept, in order", () => {
  const texts = Array.from({ length: 120 }, (_, i) => report(20_000, 100, `m${i}`));
  const batch = localBatch(texts.map((finalText, i) => ({ childId: `sa-${i}`, title: "", status: "done" as const, finalText })), { reason: "down", dir: join(tempDir(), "u") });
  assert.ok(batch.deferred > 0 && batch.deferred < 120);
  assert.deepEqual(batch.kept, texts.slice(120 - batch.deferred).map((_, i) => `sa-${120 - batch.deferred + i}`));
  assert.ok(Buffer.byteLength(batch.text) <= WAIT_CAPS.perBatchBytes);
  assert.match(batch.text, /more subagent results are waiting; they will be delivered in the next batch\.\]$/);
});

test("the private copy is never written through a symlink nor into a directory open to others: the result is kept", () => {
  const root = tempDir();
  const target = join(root, "elsewhere");
  mkdirSync(target, { mode: 0o700 });
  const linked = join(root, "unbounded");
  symlinkSync(target, linked);
  const full = report(100_000, 1_000, "s");
  const viaLink = localBatch([{ childId: "sa-1", title: "S", status: "done", finalText: full }], { reason: "down", dir: linked });
  assert.deepEqual(viaLink.kept, ["sa-1"]);
  assert.deepEqual(viaLink.delivered, []);
  assert.deepEqual(readdirSync(target), [], "nothing written through the link");
  assert.match(viaLink.text, /no private copy of it could be written \(private copy dir .* is not a directory \(a symlink\?\)/);
  assert.ok(lstatSync(linked).isSymbolicLink());

  const open = join(root, "open");
  mkdirSync(open);
  chmodSync(open, 0o777);
  const opened = localBatch([{ childId: "sa-2", title: "O", status: "done", finalText: full }], { reason: "down", dir: open });
  assert.deepEqual(opened.kept, ["sa-2"]);
  assert.deepEqual(readdirSync(open), []);
  assert.match(opened.text, /is not private to this user \(owner \d+, mode 777\)/);
});

test("the directory: ${XDG_CACHE_HOME:-$HOME/.cache}/handoff/unbounded, a relative XDG_CACHE_HOME ignored", () => {
  assert.equal(unboundedDir({ XDG_CACHE_HOME: "/c", HOME: "/h" }), "/c/handoff/unbounded");
  assert.equal(unboundedDir({ XDG_CACHE_HOME: "rel", HOME: "/h" }), "/h/.cache/handoff/unbounded");
  assert.equal(unboundedDir({}), undefined);
  const batch = localBatch([{ childId: "sa-1", title: "", status: "done", finalText: report(40_000, 50, "n") }], { reason: "down", dir: undefined });
  assert.deepEqual(batch.kept, ["sa-1"], "no copy possible: kept, not cut without it");
});

test("the one line is the hook core's: reasons on one line, cut on a character", () => {
  assert.equal(oneLine("a\nb\tc"), "a b c");
  const long = oneLine("é".repeat(200));
  assert.ok(Buffer.byteLength(long) <= 160 && long.endsWith("...") && !long.includes("\uFFFD"));
  assert.equal(cutLine("why", 1234567, "/p/x.txt"), "[handoff: why; the head and tail above were cut by the hook itself, the full text (1,234,567 bytes) is in /p/x.txt]");
});

test("the projection is handoffd's, byte for byte (handoff project --no-outline)", () => {
  const cli = realpathSync(handoffCli());  // the footers name the CLI as /proc/self/exe says it
  const store = join(tempDir(), "store");
  const cases: [string, string, number, number][] = [
    ["171 KB / 3000 lines", report(171_000, 3_000, "long"), 16 * 1024, 600],
    ["a final newline", `${report(60_000, 900, "nl")}\n`, 16 * 1024, 600],
    ["one line of 200 KB", "y".repeat(200_000), 16 * 1024, 600],
    ["long lines and UTF-8", Array.from({ length: 40 }, (_, i) => `${i} ${"é".repeat(30_000 + i)}`).join("\n"), 8 * 1024, 100],
    ["many short lines", Array.from({ length: 20_000 }, (_, i) => `l${i}`).join("\n"), 4 * 1024, 600],
    ["a small cap", report(30_000, 300, "small"), 600, 8],
  ];
  for (const [name, text, maxBytes, maxLines] of cases) {
    const daemon = JSON.parse(
      execFileSync(cli, ["project", "-", "--no-outline", "--json", "--artifact-dir", store, "--max-bytes", String(maxBytes), "--max-lines", String(maxLines)], {
        input: text,
        maxBuffer: 64 * 1024 * 1024,
      }).toString("utf8"),
    ) as { text: string; artifact: { path: string } };
    const ours = project(Buffer.from(text), { maxBytes, maxLines }, { path: daemon.artifact.path, cli });
    assert.equal(ours.text, daemon.text, name);
    // Without a handoff CLI the footer names `tail -c | head -c` ranges instead, within the same limits.
    const bare = project(Buffer.from(text), { maxBytes, maxLines }, { path: daemon.artifact.path, cli: undefined });
    assert.ok(Buffer.byteLength(bare.text) <= maxBytes && bare.text.split("\n").length <= maxLines, name);
    assert.ok(!bare.text.includes(cli), name);
  }
});

test("a line over Pi's 50 KiB page: without a handoff CLI, the footer's shell ranges give back exactly its omitted bytes", () => {
  const dir = tempDir();
  const text = `head line\n${"z".repeat(150_000)}é${"w".repeat(40_000)}\ntail line`;
  const batch = localBatch([{ childId: "sa-1", title: "Wide", status: "done", finalText: text }], { reason: "down", dir, cli: undefined });
  const section = batch.sections[0];
  assert.ok(section?.truncated === true && section.artifact?.saved === true);
  const commands = [...section.text.matchAll(/bash `(tail -c \+\d+ '[^']+' \| head -c \d+)`/g)].map((m) => m[1] as string);
  assert.ok(commands.length >= 3, section.text.slice(-700));
  const got = Buffer.concat(commands.map((command) => execFileSync("sh", ["-c", command])));
  const line = Buffer.from(text.split("\n")[1] as string);
  const shown = /\n\[\.\.\. middle omitted: line 2 of 3, /.test(section.text);
  assert.ok(shown, section.text.slice(0, 300));
  assert.ok(got.equals(line), `the ranges are line 2 exactly (${got.length} of ${line.length} bytes)`);
  for (const command of commands) assert.ok(Number(/head -c (\d+)/.exec(command)?.[1]) <= 50 * 1024, "each range within one page of Pi's bash");
});
