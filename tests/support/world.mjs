// What the real-harness suites (tests/claude-code, tests/codex, tests/gemini, tests/opencode)
// share: a temporary world with a real handoffd on a temporary socket, a process runner, waiting
// for an observable state with a deadline, and the long answers their scripted children give.
// Node built-ins only: each suite has its own node_modules, none of which this file may rely on.
// Each suite's harness.mjs extends World with its harness's specifics (binary, settings, model).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const handoffdPath = process.env.HANDOFFD ?? path.join(root, 'build/daemon/handoffd');
export const cliPath = process.env.HANDOFF_CLI ?? path.join(root, 'build/client/handoff');

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// `ms` stretched by how loaded this machine is now (the 1-minute load average per core, 1 to
// 2.5 times): for a bound on a whole harness run, whose start and model turns slow down with the
// machine, not for what handoff itself promises (its budgets are asserted by the unit tests).
export function loadScaled(ms) {
  const perCore = os.loadavg()[0] / Math.max(1, os.cpus().length);
  return Math.round(ms * Math.min(2.5, Math.max(1, perCore)));
}

// Resolves with `check()`'s first truthy result (it may be async), polling every `intervalMs`;
// throws "timed out waiting for WHAT" (with `detail()`, e.g. a log tail) after `timeoutMs`.
export async function waitFor(what, check, { timeoutMs = 30_000, intervalMs = 20, detail } = {}) {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const got = await check();
    if (got) return got;
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${detail ? `\n${detail()}` : ''}`);
    await sleep(intervalMs);  // the poll interval: nothing here can be awaited as an event
  }
}

// Whether something accepts connections on the Unix socket `socket`.
export function accepts(socket) {
  return new Promise((resolve) => {
    const c = net.connect(socket);
    c.once('connect', () => { c.destroy(); resolve(true); });
    c.once('error', () => resolve(false));
  });
}

// One JSON-RPC request on its own connection to `socket` (newline framing); resolves with the
// result, rejects with the error's message.
export function rpc(socket, method, params) {
  return new Promise((resolve, reject) => {
    const c = net.connect(socket);
    let buffer = '';
    c.setEncoding('utf8');
    c.once('error', reject);
    c.on('connect', () => c.write(JSON.stringify({ jsonrpc: '2.0', id: 1, method, ...(params ? { params } : {}) }) + '\n'));
    c.on('data', (d) => {
      buffer += d;
      const nl = buffer.indexOf('\n');
      if (nl < 0) return;
      c.destroy();
      let reply;
      try { reply = JSON.parse(buffer.slice(0, nl)); } catch (e) { reject(e); return; }
      if (reply.error) reject(new Error(`${method}: ${reply.error.code} ${reply.error.message}`));
      else resolve(reply.result);
    });
    c.on('close', () => reject(new Error(`${method}: connection closed without a reply`)));
  });
}

// Runs `file argv` to its end; resolves to { code, signal, stdout, stderr, ms }. Killed with
// SIGKILL after `timeoutMs`.
export async function runProcess(file, argv, { cwd, env, timeoutMs = 240_000 } = {}) {
  const started = Date.now();
  const child = spawn(file, argv, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const [code, signal] = await new Promise((r) => child.on('close', (c, s) => r([c, s])));
  clearTimeout(timer);
  return { code, signal, stdout, stderr, ms: Date.now() - started };
}

// The socket every client agrees on in a shell with neither XDG_RUNTIME_DIR nor HANDOFF_SOCKET
// whose TMPDIR is `tmp` (protocol/socket_location.hpp), and a kill of the daemons it started there.
export function fallbackSocket(tmp) {
  const socket = path.join(tmp, `handoff-${process.getuid()}`, 'handoffd.sock');
  return { socket, killDaemons: () => { for (const pid of daemonsServing(socket)) process.kill(pid, 'SIGKILL'); } };
}

// The live handoffd processes serving `socket` (`--socket=PATH` or `--socket PATH` on their
// command line): their pids, from /proc.
export function daemonsServing(socket) {
  const out = [];
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    let argv;
    let stat;
    try {
      argv = fs.readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0');
      stat = fs.readFileSync(`/proc/${name}/stat`, 'utf8');
    } catch { continue; }  // gone meanwhile
    if (!path.basename(argv[0] ?? '').startsWith('handoffd') || stat[stat.lastIndexOf(')') + 2] === 'Z') continue;
    if (argv.includes(`--socket=${socket}`) || argv.some((a, i) => a === '--socket' && argv[i + 1] === socket)) out.push(Number(name));
  }
  return out;
}

// A temporary world under os.tmpdir(): `dir` (prefix `prefix`), the directories named in `dirs`
// (name -> path under `dir`, made and set as this[name]), and handoffd's socket (in `run`, 0700),
// store (`artifactDir`), queue (`queueDir`) and log (`logPath`). HANDOFF_KEEP=1 keeps the
// directory after close().
export class World {
  constructor(prefix, dirs = {}) {
    this.dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
    for (const [name, rel] of Object.entries(dirs)) {
      this[name] = path.join(this.dir, rel);
      fs.mkdirSync(this[name], { recursive: true });
    }
    this.run = path.join(this.dir, 'run');
    fs.mkdirSync(this.run, { mode: 0o700 });
    this.socket = path.join(this.run, 'handoffd.sock');
    this.artifactDir = path.join(this.dir, 'artifacts');
    this.queueDir = path.join(this.dir, 'queue');
    this.logPath = path.join(this.dir, 'handoffd.log');
    this.daemon = undefined;
  }

  // Starts handoffd on this world's socket, store and queue (debug log in `logPath`), and
  // resolves once it accepts connections; throws with its log if it exits or does not listen.
  async startDaemon(args = []) {
    const log = fs.openSync(this.logPath, 'a', 0o600);
    const daemon = spawn(handoffdPath, ['--socket', this.socket, '--artifact-dir', this.artifactDir, '--queue-dir', this.queueDir,
      '--cli-path', cliPath, '--log-level', 'debug', ...args], { stdio: ['ignore', log, log] });
    fs.closeSync(log);
    this.daemon = daemon;
    await waitFor('handoffd to listen', async () => {
      if (daemon.exitCode !== null || daemon.signalCode !== null) throw new Error(`handoffd exited (${daemon.exitCode ?? daemon.signalCode}):\n${this.log()}`);
      return accepts(this.socket);
    }, { timeoutMs: 10_000, intervalMs: 10, detail: () => this.log() });
  }

  log() {
    try { return fs.readFileSync(this.logPath, 'utf8'); } catch { return ''; }
  }

  // handoffd's `daemon/status` (docs/protocol.md): its parents, children per state, waits asleep.
  status() {
    return rpc(this.socket, 'daemon/status');
  }

  // Resolves once `daemon/status` satisfies `check(status)`; e.g. a wait asleep in handoffd:
  // world.waitForStatus('a wait asleep', (s) => s.waits === 1). A status not given (the daemon
  // not listening yet, say) counts as not yet.
  waitForStatus(what, check, options = {}) {
    let last;
    return waitFor(what, async () => {
      try { last = await this.status(); } catch (e) { last = String(e); return false; }
      return check(last);
    },
      { detail: () => `last daemon/status: ${JSON.stringify(last)}\nlog tail:\n${this.log().slice(-3000)}`, ...options });
  }

  async stopDaemon() {
    if (!this.daemon) return;
    const d = this.daemon;
    this.daemon = undefined;
    const exited = new Promise((r) => (d.exitCode !== null || d.signalCode !== null ? r() : d.once('exit', r)));
    d.kill('SIGTERM');
    await exited;
  }

  // The names of the artifact store's `.txt` files.
  artifacts() {
    try { return fs.readdirSync(this.artifactDir).filter((f) => f.endsWith('.txt')); } catch { return []; }
  }

  // handoffd processes serving this world's socket that the world did not start (a client's
  // autostart, --background): their pids, from /proc.
  strayDaemons() {
    return daemonsServing(this.socket);
  }

  async close() {
    await this.stopDaemon();
    // An autostarted handoffd holding an undelivered result would outlive the world (its idle
    // exit waits for nothing to deliver): it goes with it.
    for (const pid of this.strayDaemons()) try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ }
    if (process.env.HANDOFF_KEEP) return;
    // A harness's hooks may still be finishing in the world as it is killed.
    fs.rmSync(this.dir, { recursive: true, force: true, maxRetries: 20, retryDelay: 100 });
  }
}

// A child's long answer: `lines` lines of `width` bytes ("finding NNNN xxx...", each prefixed by
// `tag`), the last one the verdict: longAnswer(3001, 57) is 171,016 bytes.
export function longAnswer(lines, width, tag = '') {
  const out = [];
  for (let i = 1; i < lines; i++) out.push(`${tag}finding ${String(i).padStart(4, '0')} ` + 'x'.repeat(Math.max(0, width - 14 - tag.length)));
  out.push(`${tag}VERDICT: ship it`);
  return out.join('\n');
}

// The events of a harness's JSON-lines output (`codex exec --json`, `opencode run --format json`):
// one JSON object a line; other lines are ignored.
export function parseEvents(stdout) {
  const events = [];
  for (const line of stdout.split('\n')) {
    if (!line.trim()) continue;
    try { events.push(JSON.parse(line)); } catch { /* not an event */ }
  }
  return events;
}
