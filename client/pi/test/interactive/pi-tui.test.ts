// handoff in the real Pi 1.6.0 as most people run it: its terminal UI (`pi`, no --mode) under tmux
// (tests/support/tmux.mjs), typed into with send-keys and read with capture-pane, on the scripted
// model. What Pi draws was looked at first; the assertions say what it draws, and the test log
// prints the lines that differ from Pi without handoff.
//
// - pi-subagents (the subagent extension most Pi users install) with and without handoff's bridge:
//   the model gets a 146 KB child answer bounded, and the screen is pi-subagents' own, collapsed and
//   expanded, but for the list of loaded extensions; with handoffd unavailable, the same plus the
//   extension's one status line saying so.
// - handoff's own subagent tools in a shell with no XDG_RUNTIME_DIR: the extension starts handoffd on
//   the private fallback socket, two 171 KB children come back as one auto-delivered batch drawn as
//   one line per child, the text only when the user expands it; nothing else of handoff's on screen.
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { after, before, test } from "node:test";

import { HandoffClient } from "../../src/client.js";
import { Daemon, delay, eventually, handoffdPath, packageRoot } from "../support/daemon.js";
import { defaultPiCli, modelsJson, node22Path, scriptedModelId, scriptedProvider } from "../support/real-pi.js";
import { ScriptedModel, textOf, type ModelRequest, type Reply } from "../support/scripted-model.js";
import { answerOfBytes, exactReport, processesWith } from "../support/subagent-scenario.js";

/** The tmux driver the other harnesses' terminal-UI tests use (tests/support/tmux.mjs). */
interface TmuxSession {
  screen(): string;
  waitFor(pattern: RegExp | { test(s: string): boolean; toString(): string }, timeoutMs?: number): Promise<string>;
  settled(quietMs?: number, timeoutMs?: number): Promise<string>;
  type(text: string): void;
  key(...names: string[]): void;
  close(timeoutMs?: number): Promise<void>;
}
type TmuxOptions = { dir: string; argv: string[]; cwd: string; env: Record<string, string | null>; cols?: number; rows?: number };
const { TmuxSession, linesMissing } = (await import(pathToFileURL(resolve(packageRoot, "../../tests/support/tmux.mjs")).href)) as {
  TmuxSession: new (options: TmuxOptions) => TmuxSession;
  /** The lines of `b` that `a` lacks, as a multiset. */
  linesMissing: (a: string[], b: string[]) => string[];
};

const peers = resolve(packageRoot, "test/peers/node_modules");
const piSubagents = resolve(peers, "pi-subagents");
const bridge = resolve(packageRoot, "dist/src/pi-subagents-bridge.js");

const KiB = 1024;
const COLS = 120;
const bytesOf = (text: string): number => Buffer.byteLength(text, "utf8");

let model: ScriptedModel;
/** The parent's script for the session under way. */
let parentReply: ((request: ModelRequest) => Reply | Promise<Reply>) | undefined;
/** What each child answers, by a tag its task holds. */
const answers = new Map<string, string>();

before(async () => {
  model = await ScriptedModel.start((request) => {
    if (!request.firstUser.startsWith("PARENT")) {
      for (const [tag, text] of answers) if (request.firstUser.includes(tag)) return { text };
      return { text: `no scripted answer for: ${request.firstUser.slice(0, 200)}` };
    }
    if (parentReply === undefined) throw new Error("no parent scripted");
    return parentReply(request);
  });
});

after(async () => {
  await model.close();
});

/**
 * A Pi terminal UI with `extensions` (`-e`, no discovery), in a world of its own under `dir`
 * (HOME, PI_CODING_AGENT_DIR, a project), `env` over the defaults; resolves once Pi has drawn its
 * header, extensions loaded, and its status line.
 */
async function startPi(dir: string, extensions: string[], env: Record<string, string | null>): Promise<TmuxSession> {
  for (const sub of ["home", "agent", "cwd"]) mkdirSync(join(dir, sub), { recursive: true });
  writeFileSync(join(dir, "agent", "models.json"), JSON.stringify(modelsJson(model.baseUrl, 200_000), null, 2));
  const tui = new TmuxSession({
    dir,
    argv: [node22Path(), defaultPiCli, "--no-session", "--offline", "-ne", ...extensions.flatMap((e) => ["-e", e]), "--provider", scriptedProvider, "--model", scriptedModelId],
    cwd: join(dir, "cwd"),
    env: {
      PATH: process.env["PATH"] ?? "/usr/bin:/bin",
      HOME: join(dir, "home"),
      PI_CODING_AGENT_DIR: join(dir, "agent"),
      PI_OFFLINE: "1",
      PI_SKIP_VERSION_CHECK: "1",
      PI_TELEMETRY: "0",
      HANDOFF_AUTOSTART: "0",
      ...env,
    },
    cols: COLS,
    rows: 40,
  });
  try {
    // The first load of pi-subagents (TypeScript, compiled by jiti) takes 30-40 s on a loaded machine.
    await tui.waitFor(/\[Extensions\][^]*scripted-model/, 180_000);
    await tui.settled(1_000);
    return tui;
  } catch (error) {
    await tui.close();
    throw error;
  }
}

/**
 * Types `prompt`, waits for the parent's last reply `done` to be drawn and the screen to be still,
 * then presses Ctrl+O (Pi's "expand tool output"). Resolves to both screens.
 */
async function converse(tui: TmuxSession, prompt: string, done: string): Promise<{ screen: string; expanded: string }> {
  tui.type(prompt);
  await tui.waitFor(new RegExp(prompt), 10_000);
  await delay(300);  // the editor takes the text before Enter
  tui.key("Enter");
  await tui.waitFor(new RegExp(`^ ${done}$`, "m"), 180_000);
  const screen = await tui.settled();
  tui.key("C-o");
  await tui.waitFor(/Tool output: expanded/, 30_000);
  const expanded = await tui.settled();
  return { screen, expanded };
}

/**
 * A screen's lines that say something, trimmed, with what differs from run to run masked: the
 * world's directory, pi-subagents' session paths and run ids, durations.
 */
function saying(screen: string, dir: string): string[] {
  return screen
    .split("\n")
    .map((line) =>
      line
        .replaceAll(dir, "<world>")
        .replace(/\/tmp\/pi-subagent-session-\w+/g, "<session-dir>")
        .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, "<run>")
        .replace(/\b(?:\d+m\d+s|\d+(?:\.\d+)?m?s)\b/g, "<duration>")  // pi-subagents: 121ms, 1.2s, 1m5s
        .trim(),
    )
    .filter((line) => line !== "" && !/^─+$/.test(line));
}

/** Nothing of handoff's on the screen beyond `allowed`: no error, stack, JSON or log line. */
function assertTidy(screen: string): void {
  assert.doesNotMatch(screen, /[Ee]rror|[Ff]ailed|\bat .+:\d+:\d+\)?$|\{"|handoffd\b|\binfo\b|\bwarn\b/m, screen);
}

/** The parent: one `subagent` call for `task`, then `done` once its result came back. */
function delegating(task: string, done: string, got: (text: string) => void): (request: ModelRequest) => Reply {
  return (request) => {
    if (request.last?.role === "user") return { toolCalls: [{ name: "subagent", id: "sub_1", arguments: { agent: "delegate", task, async: false } }] };
    got(textOf(request.last));
    return { text: done };
  };
}

/** One pi-subagents session: the parent delegates `task` (whose answer is `answer`). */
async function piSubagentsSession(extensions: string[], env: Record<string, string | null>, task: string) {
  const dir = mkdtempSync(join(tmpdir(), "handoff-pi-tui-"));
  let got: string | undefined;
  parentReply = delegating(task, "The audit is done.", (text) => (got = text));
  const tui = await startPi(dir, extensions, env);
  try {
    const { screen, expanded } = await converse(tui, "PARENT delegate the audit", "The audit is done.");
    return { dir, screen, expanded, screenLines: saying(screen, dir), expandedLines: saying(expanded, dir), got: got ?? "" };
  } finally {
    await tui.close();
    rmSync(dir, { recursive: true, force: true, maxRetries: 20, retryDelay: 100 });
  }
}

type Session = Awaited<ReturnType<typeof piSubagentsSession>>;

const full = answerOfBytes(146_000, "FGLONG");
answers.set("FGLONG", full);

// pi-subagents alone (no handoff): run once, shared by the cases.
let baselineRun: Promise<Session> | undefined;
function baseline(): Promise<Session> {
  baselineRun ??= piSubagentsSession([piSubagents], {}, "write FGLONG");
  return baselineRun;
}

/** The line that lists the extensions (under Pi's "[Extensions]" heading), if the screen shows it. */
function extensionsLine(lines: string[]): string[] {
  const heading = lines.indexOf("[Extensions]");
  return heading < 0 ? [] : [lines[heading + 1] ?? ""];
}

/** `lines` without the extension list and without the lines `extra` matches. */
function withoutOwn(lines: string[], extra: RegExp[] = []): string[] {
  const list = lines.indexOf("[Extensions]") + 1;
  return lines.filter((line, i) => (list === 0 || i !== list) && !extra.some((re) => re.test(line)));
}

/**
 * Compares a run's screens with the baseline's (printing the lines that differ): besides the
 * extension list, the run has exactly one line matching each of `extra` and every other line is
 * the baseline's, in order. The whole scrollback is compared whole; the expanded view (Ctrl+O
 * redraws the last screenful only) as the end of the baseline's, which shows as many more of its
 * lines as handoff's own took rows.
 */
function assertLikeBaseline(name: string, run: Session, base: Session, extra: RegExp[] = []): void {
  for (const [view, lines, baseLines] of [["screen", run.screenLines, base.screenLines], ["expanded", run.expandedLines, base.expandedLines]] as const) {
    console.log(`${name}, ${view}: lines only with handoff:\n  ${linesMissing(baseLines, lines).join("\n  ") || "(none)"}\nlines only without:\n  ${linesMissing(lines, baseLines).join("\n  ") || "(none)"}`);
    for (const re of extra) assert.equal(lines.filter((line) => re.test(line)).length, 1, `one line ${re} (${view})`);
    const rest = withoutOwn(lines, extra);
    const baseRest = withoutOwn(baseLines);
    if (view === "screen") assert.deepEqual(rest, baseRest, `the ${view} is the baseline's`);
    else {
      assert.ok(rest.length >= baseRest.length - extra.length - 1, `${rest.length} of the baseline's ${baseRest.length} ${view} lines`);
      assert.deepEqual(rest, baseRest.slice(baseRest.length - rest.length), `the ${view} ends as the baseline's`);
    }
  }
}

test("without handoff (the baseline): pi-subagents draws its result collapsed, and the parent model gets the 146 KB answer whole", { timeout: 300_000 }, async () => {
  const base = await baseline();
  assert.deepEqual(extensionsLine(base.screenLines), ["pi-subagents"]);
  assert.ok(base.got.includes(full), `the whole answer: got ${bytesOf(base.got)} bytes`);
  assert.ok(base.screenLines.some((line) => /^✓ delegate \(scripted-model\)/.test(line)), base.screen);
  console.log(`baseline: the model got ${bytesOf(base.got)} bytes; ${base.screenLines.length} screen lines, ${base.expandedLines.length} expanded`);
});

test("with handoff (the package and its pi-subagents bridge): the model gets 146 KB bounded to 16 KiB with head, tail and footer; the screen is pi-subagents' own but for the extension list", { timeout: 300_000 }, async () => {
  const base = await baseline();
  const daemon = await Daemon.start();
  try {
    const run = await piSubagentsSession([packageRoot, piSubagents, bridge], { HANDOFF_SOCKET: daemon.socketPath }, "write FGLONG");
    assert.ok(bytesOf(run.got) <= 16 * KiB + 256, `the model got ${bytesOf(run.got)} bytes`);
    assert.ok(run.got.includes("BEGIN FGLONG\n") && run.got.includes("\nEND FGLONG"), "head and tail");
    assert.match(run.got, /\[Truncated: [\d,]+ bytes/);
    assert.doesNotMatch(run.got, /daemon was not reached/);
    assert.deepEqual(extensionsLine(run.screenLines), ["extension.js, pi-subagents, pi-subagents-bridge.js"]);
    assertTidy(run.screen);
    assertLikeBaseline("with handoff", run, base);
    console.log(`with handoff: the model got ${bytesOf(run.got)} bytes of ${bytesOf(full)}`);
  } finally {
    await daemon.dispose();
  }
});

test("handoffd unavailable (not running, starting it turned off): the model still gets head, verdict and a line saying so; the screen adds only the extension's status line", { timeout: 300_000 }, async () => {
  const base = await baseline();
  const dir = mkdtempSync(join(tmpdir(), "handoff-pi-tui-down-"));
  try {
    const run = await piSubagentsSession([packageRoot, piSubagents, bridge], { HANDOFF_SOCKET: join(dir, "none.sock") }, "write FGLONG");
    assert.ok(bytesOf(run.got) <= 16 * KiB + 1024, `the model got ${bytesOf(run.got)} bytes`);
    assert.ok(run.got.includes("BEGIN FGLONG\n") && run.got.includes("\nEND FGLONG"), "head and tail");
    assert.match(run.got, /\[handoff: handoff's daemon was not reached/);
    assertLikeBaseline("handoffd unavailable", run, base, [/^handoff: daemon unreachable, retrying$/]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

/** The parent's last reply in the sessions of handoff's own tools. */
const REPLY = "Both reports read.";

/** Text with its white space taken out: Pi wraps lines at the terminal's width, inside a word too (an artifact's path). */
const squeezed = (text: string): string => text.replace(/\s+/g, "");

/**
 * Asserts the conversation drawn from `prompt` to REPLY, compared with white space taken out: the
 * prompt, a `subagent_spawn` call and its one-line answer per tag, the lines `between`, the results'
 * `heading`, one line per child (in either order) naming its size and its full text in
 * `artifactDir`, the hint, and REPLY; nothing else. Returns the screen's lines.
 */
function assertOwnConversation(screen: string, dir: string, c: { prompt: string; tags: [string, string]; between: string[]; heading: string; artifactDir: string }): string[] {
  const lines = saying(screen, dir);
  const from = lines.indexOf(c.prompt);
  assert.ok(from >= 0, screen);
  const artifact = new RegExp(`${squeezed(c.artifactDir.replaceAll(dir, "<world>")).replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}/[0-9a-f]{64}\\.txt`, "g");
  const conversation = squeezed(lines.slice(from, lines.indexOf(REPLY, from) + 1).join("")).replace(/sa-[0-9a-f]{6}/g, "<id>").replace(artifact, "<artifact>");
  const spawn = (t: string): string =>
    `subagent_spawn task="CHILD ${t}" title="${t}" Started subagent <id> "${t}". Its result is delivered to you when you are idle; call subagent_wait to wait for it now.`;
  const child = (t: string): string => `✓ <id> "${t}" done · 167.0 KB, 3001 lines · cut, full text in <artifact>`;
  const [a, b] = c.tags;
  const expected = (first: string, second: string): string =>
    squeezed([c.prompt, spawn(a), spawn(b), ...c.between, c.heading, child(first), child(second), "(expand to read the text)", REPLY].join(""));
  assert.ok([expected(a, b), expected(b, a)].includes(conversation), `the conversation drawn:\n${lines.slice(from).join("\n")}`);
  assert.doesNotMatch(screen, new RegExp(`(${a}|${b}) line \\d+:|BEGIN (${a}|${b})`), "no report text before it is expanded");
  assertTidy(screen);
  return lines;
}

/**
 * Asserts that the expanded view (Ctrl+O redraws the last screenful) is, up to REPLY, the end of
 * `text` exactly as the model got it: its first line drawn may be the end of a wrapped one, left out.
 */
function assertExpandedTail(expanded: string, dir: string, text: string): void {
  const shown = saying(expanded, dir);
  const reply = shown.lastIndexOf(REPLY);
  assert.ok(reply > 1, expanded);
  const tail = squeezed(shown.slice(1, reply).join("").replaceAll("<world>", dir));
  assert.ok(tail.length > 1_000, `${tail.length} characters drawn`);
  assert.ok(squeezed(text).endsWith(tail), `the expanded view is the end of what the model got:\n${expanded}`);
}

test("handoff's own subagent tools, in a shell with no XDG_RUNTIME_DIR: handoffd starts on the private fallback socket, two 171 KB children come back as one delivered batch drawn one line per child, the bounded text only once expanded", { timeout: 300_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), "handoff-pi-tui-own-"));
  const tmp = join(dir, "tmp");
  mkdirSync(tmp, { mode: 0o700 });
  const uid = process.getuid?.() ?? 0;
  const socket = join(tmp, `handoff-${uid}`, "handoffd.sock");
  const tags = ["alpha", "bravo"];
  for (const tag of tags) answers.set(`CHILD ${tag}`, exactReport(171_016, 3001, tag));
  let worker: HandoffClient | undefined;
  let delivered: string | undefined;
  parentReply = async (request) => {
    const last = request.last;
    if (last?.role === "user" && textOf(last).startsWith("PARENT"))
      return { toolCalls: tags.map((t) => ({ name: "subagent_spawn", arguments: { task: `CHILD ${t}`, title: t } })) };
    if (last?.role === "tool") {
      // Both results at handoffd before the parent goes idle: they come as one batch.
      worker ??= new HandoffClient({ socketPath: socket, clientName: "test-worker" });
      const w = worker;
      await w.connect();
      await eventually("both results at handoffd", async () => (await w.status()).queue.results === 2, 60_000);
      return { text: "Waiting for my subagents." };
    }
    delivered = textOf(last);
    return { text: REPLY };
  };
  const env = {
    XDG_RUNTIME_DIR: null,
    HANDOFF_SOCKET: null,
    TMPDIR: tmp,
    HANDOFF_AUTOSTART: "1",
    HANDOFF_DAEMON: handoffdPath(),
    XDG_STATE_HOME: join(dir, "state"),
    XDG_CACHE_HOME: join(dir, "cache"),
    HANDOFF_SUBAGENT_ARGS: "-ne",
  };
  const tui = await startPi(dir, [packageRoot], env);
  try {
    const { screen, expanded } = await converse(tui, "PARENT spawn two", REPLY);
    assert.ok(delivered !== undefined, "the model got the delivered batch");
    assert.ok(bytesOf(delivered) <= 48 * KiB, `${bytesOf(delivered)} bytes delivered`);
    for (const tag of tags) {
      assert.ok(delivered.includes(`BEGIN ${tag}\n`) && delivered.includes(`\nEND ${tag}`), `head and tail of ${tag}`);
    }
    assert.equal([...delivered.matchAll(/\[Truncated: 171,016 bytes/g)].length, 2, delivered.slice(-800));
    assert.ok(processesWith(`--socket=${socket}`).length > 0 || processesWith(socket).length > 0, "handoffd serves the fallback socket");

    const lines = assertOwnConversation(screen, dir, {
      prompt: "PARENT spawn two", tags: ["alpha", "bravo"], between: ["Waiting for my subagents."],
      heading: "Subagent results delivered: 2 results", artifactDir: join(dir, "cache", "handoff", "results"),
    });
    // Expanded: the second child's tail and footer, then the reply; nothing of the middle.
    assertExpandedTail(expanded, dir, delivered);
    assert.match(expanded, /^ *END (alpha|bravo) *$/m);
    assert.match(expanded.replace(/\n\s*/g, " "), /omitted lines \d+-\d+ in \d+ calls?, each shown whole: read offset=\d+ limit=\d+/);
    console.log(`own tools: two children of 171,016 bytes -> one batch of ${bytesOf(delivered)} bytes; ${lines.length} screen lines`);
  } finally {
    await tui.close();
    worker?.close();
    for (const pid of processesWith(socket)) process.kill(pid, "SIGKILL");
    rmSync(dir, { recursive: true, force: true, maxRetries: 20, retryDelay: 100 });
  }
});

test("handoff's own subagent_wait: the parent waits for two 171 KB children; the tool's result is drawn one line per child, the bounded text only once expanded", { timeout: 300_000 }, async () => {
  const daemon = await Daemon.start();
  const dir = mkdtempSync(join(tmpdir(), "handoff-pi-tui-wait-"));
  const tags = ["charlie", "delta"];
  for (const tag of tags) answers.set(`CHILD ${tag}`, exactReport(171_016, 3001, tag));
  let waited: string | undefined;
  parentReply = (request) => {
    const last = request.last;
    if (last?.role === "user") return { toolCalls: tags.map((t) => ({ name: "subagent_spawn", arguments: { task: `CHILD ${t}`, title: t } })) };
    const calls = request.body.messages.filter((m) => m.role === "assistant").length;
    if (calls === 1) return { toolCalls: [{ name: "subagent_wait", arguments: {} }] };
    waited = textOf(last);
    return { text: REPLY };
  };
  const tui = await startPi(dir, [packageRoot], { HANDOFF_SOCKET: daemon.socketPath, HANDOFF_SUBAGENT_ARGS: "-ne" });
  try {
    const { screen, expanded } = await converse(tui, "PARENT wait for two", REPLY);
    assert.ok(waited !== undefined, "the model got subagent_wait's result");
    assert.ok(bytesOf(waited) <= 48 * KiB, `${bytesOf(waited)} bytes`);
    for (const tag of tags) assert.ok(waited.includes(`BEGIN ${tag}\n`) && waited.includes(`\nEND ${tag}`), `head and tail of ${tag}`);
    const lines = assertOwnConversation(screen, dir, {
      prompt: "PARENT wait for two", tags: ["charlie", "delta"], between: ["subagent_wait"],
      heading: "subagent_wait: 2 results", artifactDir: daemon.artifactDir,
    });
    console.log(`subagent_wait, the conversation drawn:\n  ${lines.slice(lines.indexOf("PARENT wait for two")).join("\n  ")}`);
    assertExpandedTail(expanded, dir, waited);
  } finally {
    await tui.close();
    await daemon.dispose();
    rmSync(dir, { recursive: true, force: true, maxRetries: 20, retryDelay: 100 });
  }
});
