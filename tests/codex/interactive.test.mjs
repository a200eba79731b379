// handoff's MCP server inside the interactive Codex CLI 0.169.0 (its terminal UI, `codex` with no
// subcommand, as most people run it), under tmux on a private socket, typed into with send-keys and
// read with capture-pane, on the scripted Responses model, with the server as `handoff setup codex`
// wrote it. The headless `codex exec` parent: mcp.test.mjs.
//
// What the TUI does on a first run in a fresh HOME / CODEX_HOME (0.169.0): no trust or onboarding
// screen with an API-key provider and approval_policy "never" / danger-full-access; it installs its
// app-server daemon under CODEX_HOME/packages and starts it (a process that outlives the TUI, which
// runs the MCP servers, so `handoff mcp` and its children are its descendants, not the TUI's). Until
// that daemon has started the thread, Enter is dropped (the prompt stays in the composer): a user
// presses it again, and so does this test. MCP calls show as `• Called handoff.subagent_spawn`
// (`• Failed handoff.subagent_wait` for an error result) with the output's last lines. With
// approval_policy "on-request" Codex asks before every MCP tool call (`Allow the handoff MCP
// server to run tool "subagent_spawn"?`: 1. Allow, 2. Allow for this session, 3. Always allow,
// 4. Cancel), once per tool.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

import { World, cliPath, codexPath, longAnswer } from './harness.mjs';
import { TmuxSession } from '../support/tmux.mjs';
import { callOutputs, hasPrompt, mcpCall, startModel } from './scripted-responses.mjs';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const bytes = (s) => Buffer.byteLength(s, 'utf8');
// Codex 0.169.0 gives a model it does not know an MCP output of at most 11,964 bytes whole, after
// its "Wall time: ... seconds\nOutput:" header.
const CODEX_MCP_WHOLE = 11_964;
const HEADER = 100;

// pid -> parent pid, from /proc.
function parents() {
  const parentOf = new Map();
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${name}/stat`, 'utf8');
      parentOf.set(Number(name), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch { /* gone meanwhile */ }
  }
  return parentOf;
}

// `roots` and every process below them.
function withDescendants(roots) {
  const parentOf = parents();
  const out = new Set(roots);
  let grew = true;
  while (grew) {
    grew = false;
    for (const [child, parent] of parentOf) if (out.has(parent) && !out.has(child)) { out.add(child); grew = true; }
  }
  return [...out];
}

// Processes run from a binary under `dir` (Codex's app-server daemon, installed in CODEX_HOME).
function runFrom(dir) {
  const out = [];
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (fs.readFileSync(`/proc/${name}/cmdline`, 'utf8').startsWith(dir + path.sep)) out.push(Number(name));
    } catch { /* gone */ }
  }
  return out;
}

// The control sockets (bound paths) the processes `pids` hold: the app-server daemon's, which it
// makes outside TMPDIR (/tmp/codex-daemon-UID/HASH, with HASH.lock beside it).
function socketPaths(pids) {
  const byInode = new Map();
  try {
    for (const line of fs.readFileSync('/proc/net/unix', 'utf8').split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length >= 8) byInode.set(f[6], f[7]);
    }
  } catch { return []; }
  const out = new Set();
  for (const pid of pids) {
    let fds = [];
    try { fds = fs.readdirSync(`/proc/${pid}/fd`); } catch { continue; }
    for (const fd of fds) {
      try {
        const m = fs.readlinkSync(`/proc/${pid}/fd/${fd}`).match(/^socket:\[(\d+)\]$/);
        const p = m && byInode.get(m[1]);
        if (p && /\/codex-daemon-\d+\/[0-9a-f]{64}$/.test(p)) out.add(p);
      } catch { /* closed meanwhile */ }
    }
  }
  return [...out];
}

function alive(pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat[stat.lastIndexOf(')') + 2] !== 'Z';
  } catch {
    return false;
  }
}

// `codex` (the TUI) under tmux in `world`; the pane stays after Codex exits, to be read.
class CodexTui extends TmuxSession {
  constructor(world, env = {}) {
    super({ dir: world.dir, argv: ['sh', '-c', '"$0"; sleep 600', codexPath], cwd: world.work, env: world.env(env), cols: 200 });
    this.world = world;
  }

  // Types `prompt` and presses Enter until Codex takes it (`taken()`): Enter before its app-server
  // has started the thread is dropped. The composer cannot be watched for the text instead of the
  // 300 ms: Codex holds keys that come fast as a paste and draws them only with a later key (a
  // wait for the echo saw the empty composer for 15 s, 2026-12-05); taken() is what is awaited.
  async submit(prompt, taken, timeoutMs = 45_000) {
    this.type(prompt);
    await sleep(300);
    const until = Date.now() + timeoutMs;
    while (!taken()) {
      if (Date.now() > until) throw new Error(`Codex never took the prompt:\n${this.screen()}`);
      this.key('Enter');
      for (let i = 0; i < 15 && !taken(); i++) await sleep(100);  // 1.5 s for it to be taken, then Enter again
    }
  }

  keys(...keys) {
    this.key(...keys);
  }

  // Ends the TUI, its app-server daemon (which outlives it) and everything below them, and waits
  // until they are gone.
  async close() {
    const all = withDescendants([this.pid, ...runFrom(this.world.codexHome)]);
    const sockets = socketPaths(all);
    spawnSync('tmux', ['-S', this.socket, 'kill-server']);
    for (const pid of all) try { process.kill(pid, 'SIGTERM'); } catch { /* gone */ }
    for (let i = 0; i < 40 && all.some(alive); i++) await sleep(50);  // poll until gone, 2 s at most
    // Anything started meanwhile (a child the server was starting) too.
    const left = withDescendants([...all.filter(alive), ...runFrom(this.world.codexHome)]);
    for (const pid of left) try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ }
    for (let i = 0; i < 100 && left.some(alive); i++) await sleep(50);  // poll until gone, 5 s at most
    for (const p of sockets) for (const f of [p, `${p}.lock`]) fs.rmSync(f, { force: true });
  }
}

// The parent's script (every request of the conversation whose prompt holds `prompt`): `steps` in
// order, each given the outputs of the previous calls; Codex's own side requests (the thread's
// title, a json_schema answer) get `{}`; children answer from `answers` by their task's marker.
function script(prompt, steps, answers) {
  const seen = { parent: [], outputs: [] };
  const respond = (request) => {
    for (const [marker, answer] of Object.entries(answers)) if (hasPrompt(request, marker)) return { text: answer };
    if (request.text?.format?.type === 'json_schema' || !hasPrompt(request, prompt)) return { text: '{"title":"audit"}' };
    seen.parent.push(request);
    const outputs = [...callOutputs(request).values()].map((o) => o.text);
    if (seen.parent.length > 1) seen.outputs.push(outputs);
    const step = steps[seen.parent.length - 1] ?? (() => ({ text: 'PARENT DONE' }));
    return step(outputs);
  };
  return { respond, seen };
}

const spawn = (task) => mcpCall('handoff', 'subagent_spawn', { task });
const wait = () => mcpCall('handoff', 'subagent_wait', {});

async function tuiWorld(respond, { approval } = {}) {
  const world = new World();
  const model = await startModel(respond);
  world.configure(model.baseUrl);
  if (approval) {
    // Codex's defaults for a user's own config: approvals on request, the workspace sandbox.
    const text = fs.readFileSync(world.configPath(), 'utf8');
    fs.writeFileSync(world.configPath(), text.replace('approval_policy = "never"', `approval_policy = "${approval}"`)
      .replace('sandbox_mode = "danger-full-access"', 'sandbox_mode = "workspace-write"'));
  }
  execFileSync(cliPath, ['setup', 'codex'], { env: world.env(), encoding: 'utf8', timeout: 30_000 });
  return { world, model };
}

test('TUI: a 171 KB child answer reaches the parent bounded; the screen shows both calls', { timeout: 120_000 }, async () => {
  const answer = longAnswer(3001, 57);
  assert.equal(bytes(answer), 171_016);
  const { respond, seen } = script('delegate the audit', [
    () => ({ calls: [spawn('CHILD-LONG audit the parser')] }),
    () => ({ calls: [wait()] }),
  ], { 'CHILD-LONG': answer });
  const { world, model } = await tuiWorld(respond);
  let tui;
  try {
    await world.startDaemon();
    tui = new CodexTui(world);
    await tui.waitFor(/Ask Codex to do anything/);
    await tui.submit('delegate the audit', () => seen.parent.length > 0);
    const screen = await tui.waitFor(/PARENT DONE/, 60_000);
    const [spawned] = seen.outputs[0];
    assert.match(spawned, /^Wall time[\s\S]*Started subagent cx-[0-9a-f]{6} "CHILD-LONG audit the parser"/);
    const [bounded] = seen.outputs[1];
    assert.match(bounded, /^Wall time: [\d.]+ seconds\nOutput:/);
    assert.ok(bytes(bounded) <= CODEX_MCP_WHOLE + HEADER, `the wait's output is ${bytes(bounded)} bytes`);
    assert.doesNotMatch(bounded, /tokens truncated/, 'Codex did not cut it again');
    assert.match(bounded, /finding 0001 /);
    assert.match(bounded, /VERDICT: ship it/);
    assert.match(bounded, /\[Truncated: 171,016 bytes \/ 3001 lines in full/);
    // What the user sees: both MCP calls and the bounded answer's head of the footer.
    assert.match(screen, /Called handoff\.subagent_spawn/);
    assert.match(screen, /Started subagent cx-[0-9a-f]{6} "CHILD-LONG audit the parser"/);
    assert.match(screen, /Called handoff\.subagent_wait/);
    assert.match(screen, /\[Truncated: 171,016 bytes/);
    assert.doesNotMatch(screen, /Would you like|Allow Codex|approve this/i, 'no approval prompt with approval_policy "never"');
    const [artifact] = world.artifacts();
    assert.equal(fs.readFileSync(path.join(world.artifactDir, artifact), 'utf8'), answer);
  } finally {
    await tui?.close();
    await model.close();
    await world.close();
  }
});

test('TUI: handoffd down and autostart off: the wait still gives the answer, with one line saying handoffd was not reached, and the turn ends', { timeout: 120_000 }, async () => {
  const { respond, seen } = script('delegate offline', [
    () => ({ calls: [spawn('CHILD-OFF check')] }),
    () => ({ calls: [wait()] }),
  ], { 'CHILD-OFF': 'offline answer\nVERDICT: ok' });
  const { world, model } = await tuiWorld(respond);
  let tui;
  try {
    // No handoffd on the socket, and the server may not start one.
    tui = new CodexTui(world, { HANDOFF_AUTOSTART: '0' });
    await tui.waitFor(/Ask Codex to do anything/);
    await tui.submit('delegate offline', () => seen.parent.length > 0);
    const screen = await tui.waitFor(/PARENT DONE/, 60_000);
    const got = seen.outputs.flat().join('\n');
    assert.match(got, /Subagent cx-[0-9a-f]{6} "CHILD-OFF check" finished\.\n\noffline answer\nVERDICT: ok/, got);
    assert.match(got, /\[handoff: handoff's daemon was not reached \(handoffd is not running.+\); handoff mcp gave these results itself\]/, got);
    assert.doesNotMatch(screen, /Failed handoff\.subagent_wait/);
    assert.equal(fs.existsSync(world.socket), false, 'no handoffd was started');
  } finally {
    await tui?.close();
    await model.close();
    await world.close();
  }
});

test('TUI with approvals on request: handoff\'s tools run without asking (setup\'s default_tools_approval_mode = "approve", as Codex\'s own spawn_agent does), and the answer arrives', { timeout: 120_000 }, async () => {
  const short = 'All 12 tests pass.\nVERDICT: fine';
  const { respond, seen } = script('delegate the tests', [
    () => ({ calls: [spawn('CHILD-SHORT run the tests')] }),
    () => ({ calls: [wait()] }),
  ], { 'CHILD-SHORT': short });
  const { world, model } = await tuiWorld(respond, { approval: 'on-request' });
  let tui;
  try {
    await world.startDaemon();
    tui = new CodexTui(world);
    await tui.waitFor(/Ask Codex to do anything/);
    await tui.submit('delegate the tests', () => seen.parent.length > 0);
    // Without the setting Codex asks before each call: "Allow the handoff MCP server to run tool
    // "NAME"?" (1. Allow, 2. Allow for this session, ...). It must never ask.
    const until = Date.now() + 60_000;
    let screen = tui.screen();
    while (!/PARENT DONE/.test(screen)) {
      assert.doesNotMatch(screen, /Allow the handoff MCP server/);
      if (Date.now() > until) throw new Error(`the turn never ended:\n${screen}`);
      await sleep(200);  // the poll interval
      screen = tui.screen();
    }
    assert.doesNotMatch(screen, /Allow the handoff MCP server/);
    const [spawned] = seen.outputs[0];
    assert.match(spawned, /Started subagent cx-[0-9a-f]{6} "CHILD-SHORT run the tests"/);
    const [waited] = seen.outputs[1];
    assert.ok(waited.includes(short), waited);
    assert.match(screen, /Called handoff\.subagent_spawn/);
    assert.match(screen, /Called handoff\.subagent_wait/);
    assert.deepEqual(world.artifacts(), []);
  } finally {
    await tui?.close();
    await model.close();
    await world.close();
  }
});
