// scripts/install.sh as a new user runs it: a temporary HOME with no daemon running, the
// prefix a temporary directory, then a real Pi 1.6.0 (RPC mode, the scripted model) started
// with no -e: the package loads from Pi's settings, where `handoff setup pi` put it, and the
// extension starts the installed handoffd itself.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync, writeFileSync } from "node:fs";
import { delimiter, join, resolve } from "node:path";
import { test } from "node:test";

import { eventually, packageRoot } from "../support/daemon.js";
import { RealPi } from "../support/real-pi.js";
import { ScriptedModel, textOf } from "../support/scripted-model.js";
import { exactReport, parentRequests, toolEnd, toolText } from "../support/subagent-scenario.js";

const repo = resolve(packageRoot, "../..");
const installScript = join(repo, "scripts/install.sh");
const piSubagents = resolve(packageRoot, "test/peers/node_modules/pi-subagents");
const claudeBin = join(repo, "tests/claude-code/node_modules/.bin");
const KiB = 1024;

interface User {
  dir: string;
  home: string;
  agentDir: string;
  prefix: string;
  run: string;
  state: string;
  env: Record<string, string>;
}

/** The user's environment: everything of theirs under `dir`; PATH without any claude unless asked. */
function userOf(paths: { dir: string; home: string; agentDir: string }, extraPath: string[] = []): User {
  const run = join(paths.dir, "run");
  const state = join(paths.dir, "state");
  mkdirSync(run, { recursive: true });
  chmodSync(run, 0o700);
  const env: Record<string, string> = {
    PATH: [...extraPath, ...(process.env["PATH"] ?? "/usr/bin:/bin").split(delimiter)].join(delimiter),
    HOME: paths.home,
    PI_CODING_AGENT_DIR: paths.agentDir,
    XDG_RUNTIME_DIR: run,
    XDG_STATE_HOME: state,
  };
  if (process.env["HANDOFF_BUILD_DIR"]) env["HANDOFF_BUILD_DIR"] = process.env["HANDOFF_BUILD_DIR"];
  return { ...paths, prefix: join(paths.dir, "prefix"), run, state, env };
}

function install(user: User, ...args: string[]): string {
  return execFileSync("bash", [installScript, "--prefix", user.prefix, ...args], { env: user.env, encoding: "utf8", timeout: 600_000 });
}

/** Live handoffd processes of this user's socket, with the executable each runs. */
function daemonsOf(user: User): { pid: number; exe: string }[] {
  const socket = join(user.run, "handoff", "handoffd.sock");
  const found = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const args = readFileSync(`/proc/${name}/cmdline`, "utf8").split("\0");
      const state = readFileSync(`/proc/${name}/stat`, "utf8");
      if (state.slice(state.lastIndexOf(")") + 2)[0] === "Z") continue;
      if (args.includes(`--socket=${socket}`)) found.push({ pid: Number(name), exe: readlinkSync(`/proc/${name}/exe`) });
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

function stopDaemons(user: User): void {
  for (const { pid } of daemonsOf(user)) process.kill(pid, "SIGKILL");
}

/** Every file under `dir`, relative. */
function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => !entry.isDirectory())
    .map((entry) => join(entry.parentPath, entry.name).slice(dir.length + 1));
}

test("install.sh, then a Pi with no -e: the package loads from Pi's settings, starts handoffd itself, a spawned child's 171 KB answer arrives bounded, and again after a kill -9 of that daemon", async () => {
  const report = exactReport(171_000, 3_000, "inst");
  const model = await ScriptedModel.start((request) => {
    if (request.firstUser.startsWith("CHILD second")) return { text: "BEGIN second\nthe second answer\nEND second" };
    if (request.firstUser.startsWith("CHILD")) return { text: report };
    const last = request.last;
    if (last?.role === "user" && textOf(last) === "PARENT again")
      return { toolCalls: [{ name: "subagent_spawn", arguments: { task: "CHILD second report", title: "Second" } }] };
    if (last?.role === "user") return { toolCalls: [{ name: "subagent_spawn", arguments: { task: "CHILD write the report", title: "Report" } }] };
    if (last?.role === "tool" && textOf(last).includes("Started subagent")) return { toolCalls: [{ name: "subagent_wait", arguments: {} }] };
    return { text: "read it" };
  });
  let user: User | undefined;
  let installed = "";
  const pi = await RealPi.start({
    model,
    fromSettings: true,
    prepare: (paths) => {
      user = userOf(paths);
      installed = install(user);
      assert.equal(daemonsOf(user).length, 0, "installing starts no daemon");
      // No HANDOFF_SOCKET, no HANDOFF_DAEMON: the defaults of the user's session.
      return { XDG_RUNTIME_DIR: user.run, XDG_STATE_HOME: user.state };
    },
    env: { HANDOFF_AUTOSTART: "1", HANDOFF_SUBAGENT_ARGS: "-ne" },
  });
  const u = user!;
  try {
    assert.match(installed, /setup pi: wrote handoff's entries to /);
    assert.match(installed, /skipped Claude Code: no claude on the PATH/);
    const settings = JSON.parse(readFileSync(join(u.agentDir, "settings.json"), "utf8")) as { packages: string[] };
    assert.deepEqual(settings.packages, [join("..", "prefix", "share", "handoff", "pi")], "as `pi install` writes it");

    await pi.prompt("PARENT please delegate");
    const waited = await toolEnd(pi, "subagent_wait", 90_000);
    const seen = toolText(waited);
    assert.ok(Buffer.byteLength(seen) <= 16 * KiB, `wait result ${Buffer.byteLength(seen)} B within 16 KiB`);
    assert.match(seen, /^Subagent sa-[0-9a-f]+ "Report" finished\.\n\nBEGIN inst\n/);
    assert.match(seen, /\nEND inst\n/);
    const store = join(u.home, ".cache", "handoff", "results");
    assert.ok(seen.includes(`Full text: ${store}/`), seen.slice(-400));
    const tools = parentRequests(model, "PARENT").flatMap((r) => (r.body.tools ?? []).map((t) => t.function.name));
    assert.ok(tools.includes("subagent_spawn") && tools.includes("subagent_wait"));

    // One daemon (a second start racing the first has exited 3 by now).
    const daemons = await eventually("one daemon", () => (daemonsOf(u).length === 1 ? daemonsOf(u) : false), 5_000);
    assert.equal(daemons[0]!.exe, join(u.prefix, "bin", "handoffd"), "the installed daemon, started by the extension");
    assert.match(readFileSync(join(u.state, "handoff", "handoffd.log"), "utf8"), /listening on /);

    // The daemon killed: the extension's reconnection starts another, and the next child's
    // answer arrives through it.
    await pi.waitFor((e) => e.type === "agent_settled", 30_000, "the first run to settle", pi.events.indexOf(waited));
    process.kill(daemons[0]!.pid, "SIGKILL");
    const from = pi.events.length;
    await pi.prompt("PARENT again");
    const second = await toolEnd(pi, "subagent_wait", 90_000, from);
    assert.match(toolText(second), /"Second" finished\.\n\nBEGIN second\nthe second answer\nEND second/);
    const replaced = await eventually("a new daemon", () => {
      const now = daemonsOf(u);
      return now.length === 1 && now[0]!.pid !== daemons[0]!.pid ? now : false;
    }, 10_000);
    assert.equal(replaced[0]!.exe, join(u.prefix, "bin", "handoffd"));
  } finally {
    await pi.close();
    await model.close();
    stopDaemons(u);
  }
});

test("install.sh with pi-subagents among Pi's packages: the bridge is set up, and its 146 KB foreground answer reaches the parent model bounded", async () => {
  const full = exactReport(146_000, 2_600, "psa");
  let received: string | undefined;
  const model = await ScriptedModel.start((request) => {
    const isChild = !(request.body.tools ?? []).some((tool) => tool.function.name === "subagent");
    if (isChild) return { text: full };
    const last = request.last;
    if (last?.role === "user") return { toolCalls: [{ name: "subagent", id: "sub_1", arguments: { agent: "delegate", task: "write it", async: false } }] };
    received = textOf(last);
    return { text: "done" };
  });
  let user: User | undefined;
  const pi = await RealPi.start({
    model,
    fromSettings: true,
    prepare: (paths) => {
      user = userOf(paths);
      writeFileSync(join(paths.agentDir, "settings.json"), JSON.stringify({ packages: [piSubagents] }));
      install(user);
      return { XDG_RUNTIME_DIR: user.run, XDG_STATE_HOME: user.state };
    },
    env: { HANDOFF_AUTOSTART: "1" },
  });
  const u = user!;
  try {
    const settings = JSON.parse(readFileSync(join(u.agentDir, "settings.json"), "utf8")) as { packages: string[]; extensions: string[] };
    assert.deepEqual(settings.extensions, [join(u.prefix, "share/handoff/pi/dist/src/pi-subagents-bridge.js")]);
    assert.equal(settings.packages[0], piSubagents);
    await pi.prompt("bound one child");
    await eventually("the parent's final answer", () => received !== undefined, 120_000);
    const text = received ?? "";
    assert.ok(Buffer.byteLength(text) <= 16 * KiB + 256, `received ${Buffer.byteLength(text)} bytes`);
    assert.ok(text.includes("BEGIN psa\n") && text.includes("\nEND psa"), "first and last lines");
    assert.match(text, /\[Truncated: /);
    assert.equal(daemonsOf(u)[0]?.exe, join(u.prefix, "bin", "handoffd"));
  } finally {
    await pi.close();
    await model.close();
    stopDaemons(u);
  }
});

test("install.sh twice, then --uninstall: nothing of handoff under the prefix or in the settings it edited, the rest of them as they were", () => {
  const dir = execFileSync("mktemp", ["-d", "/tmp/handoff-install-XXXXXX"], { encoding: "utf8" }).trim();
  const home = join(dir, "home");
  const agentDir = join(dir, "agent");
  for (const d of [home, agentDir, join(home, ".claude")]) mkdirSync(d, { recursive: true });
  // A real Claude Code on the PATH: install.sh sets it up too.
  const user = userOf({ dir, home, agentDir }, [claudeBin]);
  const piBefore = { theme: "dark", packages: ["npm:some-package@1.0.0"], extensions: ["/opt/mine.js"] };
  const claudeBefore = { model: "opus", permissions: { allow: ["Bash(ls)"] }, hooks: { Stop: [{ hooks: [{ type: "command", command: "true" }] }] } };
  writeFileSync(join(agentDir, "settings.json"), JSON.stringify(piBefore));
  writeFileSync(join(home, ".claude", "settings.json"), JSON.stringify(claudeBefore));
  const readJson = (path: string): unknown => JSON.parse(readFileSync(path, "utf8"));

  const first = install(user);
  const filesAfterFirst = filesUnder(user.prefix).sort();
  const piAfterFirst = readFileSync(join(agentDir, "settings.json"), "utf8");
  const claudeAfterFirst = readFileSync(join(home, ".claude", "settings.json"), "utf8");
  assert.match(first, /setup claude-code: wrote handoff's entries to /);
  assert.match(first, /pi-subagents is not among Pi's packages: no bridge/);
  assert.ok(filesAfterFirst.includes("bin/handoffd") && filesAfterFirst.includes("bin/handoff"), filesAfterFirst.join(" "));
  assert.ok(filesAfterFirst.includes("share/handoff/pi/dist/src/extension.js"));
  assert.match(claudeAfterFirst, / hook claude-code/);
  // The hooks that bound background agents in Claude Code's terminal UI, the deliverer async.
  const hooks = (JSON.parse(claudeAfterFirst) as { hooks: Record<string, { hooks: { command: string; asyncRewake?: boolean }[] }[]> }).hooks;
  assert.ok(hooks["SubagentStop"]?.some((g) => g.hooks.some((h) => h.command.endsWith(" hook claude-code"))));
  assert.ok(hooks["UserPromptSubmit"]?.some((g) => g.hooks.some((h) => h.command.endsWith(" hook claude-code --deliver") && h.asyncRewake === true)));

  const second = install(user);
  assert.match(second, /setup pi: .* already has handoff's entries; nothing to change/);
  assert.match(second, /setup claude-code: .* already has handoff's entries; nothing to change/);
  assert.deepEqual(filesUnder(user.prefix).sort(), filesAfterFirst, "twice is once");
  assert.equal(readFileSync(join(agentDir, "settings.json"), "utf8"), piAfterFirst);
  assert.equal(readFileSync(join(home, ".claude", "settings.json"), "utf8"), claudeAfterFirst);

  const removed = install(user, "--uninstall");
  assert.match(removed, /removed handoff from /);
  assert.match(removed, /kept the queue and log/);
  assert.deepEqual(filesUnder(user.prefix), [], "nothing left under the prefix");
  assert.deepEqual(readdirSync(user.prefix), [], "not even an empty directory of handoff's");
  assert.deepEqual(readJson(join(agentDir, "settings.json")), piBefore);
  assert.deepEqual(readJson(join(home, ".claude", "settings.json")), claudeBefore);
  assert.match(install(user, "--uninstall"), /nothing installed under /);
  execFileSync("rm", ["-rf", dir]);
});
