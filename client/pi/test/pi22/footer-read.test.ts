// The footer of a cut result, followed in Pi 1.6.0's own tools: real projections from a real
// handoffd (the TS client's completed + wait), every call the footer names run with Pi's read
// tool (createReadTool) on the real artifact and every command with Pi's bash tool
// (createBashTool: a real shell running the real `handoff` CLI, which the footer names by the
// absolute path handoffd resolved, not on the shell's PATH). Head + what the calls return + tail
// must be the original bytes, and Pi must print no truncation notice and no refusal.
//
// Needs Node >= 22.19 (Pi 1.6.0's modules): CTest runs it with scripts/node22.sh's Node, apart
// from the Node 20 suite (dist/test/*.test.js does not reach this folder).
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { after, before, describe, test } from "node:test";

import { createBashTool, createReadTool } from "@earendil-works/pi-coding-agent";

import { HandoffClient } from "../../src/client.js";
import type { Section } from "../../src/protocol.js";
import { Daemon, packageRoot } from "../support/daemon.js";

const pageBytes = 50 * 1024;  // Pi's DEFAULT_MAX_BYTES
const pageLines = 2000;       // Pi's DEFAULT_MAX_LINES
const maxListed = 8;          // projection_notice.hpp's max_listed_reads

/** $HANDOFF_CLI (set by the CTest registration), else ../../build/client/handoff. */
function handoffCliPath(): string {
  return process.env["HANDOFF_CLI"] ?? resolve(packageRoot, "../../build/client/handoff");
}

/** A call the footer (or `handoff read --plan`) names. */
type Call = { kind: "read"; offset: number; limit: number } | { kind: "bash"; command: string; first: number; end: number };

/** The CLI word the footer's commands start with: single-quoted like the artifact path. */
const cliWord = String.raw`'((?:[^']|'\\'')*)'`;
const callPattern = new RegExp(
  String.raw`read offset=(\d+) limit=(\d+)|bash \`(${cliWord} read --bytes (\d+)-(\d+) '(?:[^']|'\\'')*')\``,
  "g",
);

/** Every CLI word in `text`'s bash commands, unquoted. */
function clisOf(text: string): string[] {
  return [...text.matchAll(new RegExp(String.raw`bash \`${cliWord} read `, "g"))].map((m) =>
    (m[1] ?? "").replaceAll(String.raw`'\''`, "'"),
  );
}

function parseCalls(list: string): Call[] {
  return [...list.matchAll(callPattern)].map((m): Call =>
    m[1] !== undefined
      ? { kind: "read", offset: Number(m[1]), limit: Number(m[2]) }
      : { kind: "bash", command: m[3] ?? "", first: Number(m[5]), end: Number(m[6]) },
  );
}

interface Footer {
  first: number;
  last: number;
  calls: Call[];
  plan?: string;  // the `handoff read --plan` command, when the footer names it instead
}

function parseFooter(projection: string): Footer {
  const listed = /omitted lines? (\d+)(?:-(\d+))? in (\d+) calls?, each shown whole: (.*)\.\]$/.exec(projection);
  if (listed) {
    const calls = parseCalls(listed[4] ?? "");
    assert.equal(calls.length, Number(listed[3]), "the footer counts its calls");
    return { first: Number(listed[1]), last: Number(listed[2] ?? listed[1]), calls };
  }
  const planned =
    new RegExp(
      String.raw`Full text saved; bash \`(${cliWord} read --plan (\d+)-(\d+) '(?:[^']|'\\'')*')\` lists the calls that read the omitted lines? (\d+)(?:-(\d+))? back, each shown whole\.\]$`,
    ).exec(projection);
  assert.ok(planned, `no read calls in the footer: ${projection.slice(-400)}`);
  return { first: Number(planned[3]), last: Number(planned[4]), calls: [], plan: planned[1] ?? "" };
}

function textOf(result: { content: readonly { type: string; text?: string }[] }): string {
  assert.equal(result.content.length, 1);
  const [block] = result.content;
  assert.equal(block?.type, "text");
  return block?.text ?? "";
}

describe("the footer's calls in Pi 1.6.0's read and bash tools", () => {
  let daemon: Daemon;
  let client: HandoffClient;
  let home: string;
  const read = createReadTool(process.cwd());
  const bash = createBashTool(process.cwd());
  let child = 0;

  before(async () => {
    home = mkdtempSync(join(tmpdir(), "handoff-footer-pi-"));
    process.env["PI_CODING_AGENT_DIR"] = join(home, "agent");  // Pi's bash puts its bin dir there
    daemon = await Daemon.start();
    client = new HandoffClient({ socketPath: daemon.socketPath, clientName: "footer-pi-read-test" });
    await client.connect();
  });

  after(async () => {
    client.close();
    await daemon.dispose();
    rmSync(home, { recursive: true, force: true });
  });

  /** The text as the parent would get it from subagent_wait: a real projection by handoffd. */
  async function project(text: string): Promise<Section> {
    child += 1;
    const childId = `c${child}`;
    await client.completed({ parentId: "parent", childId, status: "done", finalText: text });
    const result = await client.wait({ parentId: "parent", childIds: [childId], timeoutMs: 10_000 });
    const section = result.sections[0];
    assert.ok(section !== undefined && section.truncated, "the text is cut");
    assert.ok(Buffer.byteLength(section.text) <= result.budget.perResultBytes);
    return section;
  }

  async function runBash(command: string): Promise<string> {
    const result = await bash.execute("bash", { command });
    const shown = textOf(result);
    assert.ok(!/\[Showing (lines|last)/.test(shown), `Pi's bash cut the output of ${command}`);
    return shown;
  }

  /** Runs one call in Pi's tools; returns exactly what it gives of the artifact. */
  async function follow(call: Call, path: string, lines: readonly string[]): Promise<string> {
    if (call.kind === "bash") return runBash(call.command);
    const result = await read.execute("read", { path, offset: call.offset, limit: call.limit });
    const shown = textOf(result);
    assert.ok(!/\[Line \d+ is .* exceeds/.test(shown), `Pi refused read offset=${call.offset}: ${shown.slice(0, 200)}`);
    assert.ok(!/\[Showing lines/.test(shown), `Pi cut read offset=${call.offset} limit=${call.limit}`);
    // A read that stops before the end says where the rest is; that note is not the file's.
    const last = call.offset + call.limit - 1;
    const note = last < lines.length ? `\n\n[${lines.length - last} more lines in file. Use offset=${last + 1} to continue.]` : "";
    assert.ok(shown.endsWith(note));
    return shown.slice(0, shown.length - note.length);
  }

  async function readBack(text: string): Promise<{ footer: Footer; calls: Call[] }> {
    const section = await project(text);
    const path = section.artifact?.path;
    assert.ok(section.artifact?.saved && path !== undefined);
    assert.equal(readFileSync(path, "utf8"), text);
    const footer = parseFooter(section.text);
    // handoffd names the CLI beside it (../client/handoff in the build tree) by its absolute
    // path: the commands run although no `handoff` is on the shell's PATH.
    for (const cli of clisOf(section.text)) assert.equal(cli, realpathSync(handoffCliPath()));
    let calls = footer.calls;
    if (footer.plan !== undefined) {
      const listing = await runBash(footer.plan);
      assert.ok(!listing.includes("# more:"), "one listing holds these calls");
      calls = parseCalls(listing);
      assert.equal(calls.length, listing.trimEnd().split("\n").length - 1, "one call a line after the header");
    } else {
      assert.ok(calls.length <= maxListed);
    }
    assert.ok(calls.length > 0);

    // What the projection shows whole: the lines before the marker, and after it up to the
    // footer; the footer's range says which of them are whole lines of the text.
    const lines = text.split("\n");
    const shownLines = section.text.split("\n");
    const marker = shownLines.findIndex((line) => line.startsWith("[... middle omitted: "));
    const footerAt = shownLines.findIndex((line) => line.startsWith("[Truncated: "));
    const head = shownLines.slice(0, footer.first - 1);
    let tail = shownLines.slice(marker + 1, footerAt);
    if (text.endsWith("\n")) tail = [...tail, ""];  // the footer starts on the empty last line
    tail = tail.slice(tail.length - (lines.length - footer.last));
    assert.deepEqual(head, lines.slice(0, footer.first - 1));

    // Follow every call, joining what they return as the lines are joined.
    let middle = "";
    let previous: Call | undefined;
    for (const call of calls) {
      const continues = previous?.kind === "bash" && call.kind === "bash" && call.first === previous.end;
      if (previous !== undefined && !continues) middle += "\n";
      const got = await follow(call, path, lines);
      if (call.kind === "read") {
        assert.ok(call.limit <= pageLines);
        assert.ok(Buffer.byteLength(got) <= pageBytes);
      } else {
        assert.equal(Buffer.byteLength(got), call.end - call.first);
      }
      middle += got;
      previous = call;
    }
    assert.equal(middle, lines.slice(footer.first - 1, footer.last).join("\n"), "the calls give the omitted lines");
    const rebuilt = [...head, middle, ...tail].join("\n");
    assert.equal(Buffer.compare(Buffer.from(rebuilt), Buffer.from(text)), 0, "head + calls + tail == the text");
    return { footer, calls };
  }

  test("171 KB of many lines: pages of 50 KiB", async () => {
    const lines = Array.from({ length: 3000 }, (_, i) => `line ${i + 1} `.padEnd(56, "-"));
    const { calls } = await readBack(lines.join("\n"));
    assert.ok(calls.length >= 3 && calls.every((c) => c.kind === "read"));
  });

  test("one 200 KB line: byte ranges through bash", async () => {
    let line = "";
    for (let i = 0; line.length < 200_000; i += 1) line += `word${i} `;
    const { calls } = await readBack(line);
    assert.ok(calls.length >= 4 && calls.every((c) => c.kind === "bash"));
  });

  test("CJK text, with a CJK line over 50 KiB cut between characters", async () => {
    const lines = Array.from({ length: 2500 }, (_, i) => `${i} ${"汉字の文章".repeat(4)}`);
    lines[1200] = "中".repeat(40_000);  // 120,000 bytes: 50 KiB is not a whole number of characters
    const { calls } = await readBack(lines.join("\n"));
    assert.ok(calls.some((c) => c.kind === "bash" && (c.end - c.first) % 3 === 0 && c.end - c.first < pageBytes));
  });

  test("CRLF lines and a final newline", async () => {
    const text = Array.from({ length: 5000 }, (_, i) => `windows line ${i}\r\n`).join("");
    await readBack(text);
    const section = await project(text);
    assert.ok(section.text.includes("windows line 4999\r\n[Truncated: "), "the last line with content is in the tail");
  });

  test("lines just under, at and over 50 KiB", async () => {
    const lines = ["start"];
    for (const size of [pageBytes - 1, pageBytes, pageBytes + 1, 100, pageBytes - 2, 3])
      lines.push("x".repeat(size), `after ${size}`);
    lines.push("end");
    const { calls } = await readBack(`${lines.join("\n")}\n`);
    assert.ok(calls.some((c) => c.kind === "read"));
    assert.ok(calls.some((c) => c.kind === "bash"));
  });

  test("more than 2000 short lines omitted: pages of 2000 lines", async () => {
    const lines = Array.from({ length: 9000 }, (_, i) => `l${i}`);
    const { calls } = await readBack(lines.join("\n"));
    assert.ok(calls.some((c) => c.kind === "read" && c.limit === pageLines));
  });

  test("more calls than the footer lists: the plan command lists them", async () => {
    const lines = Array.from({ length: 20000 }, (_, i) => `line ${i + 1} `.padEnd(59, "."));
    const { footer, calls } = await readBack(lines.join("\n"));
    assert.ok(footer.plan !== undefined);
    assert.ok(calls.length > maxListed);
  });
});
