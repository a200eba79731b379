// A real Codex CLI 0.169.0 (this folder's pinned npm install) on the scripted Responses model, with
// a real handoffd on a temporary socket and a temporary HOME / CODEX_HOME / TMPDIR.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');
// The native binary (the npm wrapper `node_modules/.bin/codex` only execs it).
export const codexPath = process.env.CODEX_BIN
  ?? path.join(here, 'node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex');
export const handoffdPath = process.env.HANDOFFD ?? path.join(root, 'build/daemon/handoffd');
export const cliPath = process.env.HANDOFF_CLI ?? path.join(root, 'build/client/handoff');

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function accepts(socket) {
  return new Promise((resolve) => {
    const c = net.connect(socket);
    c.once('connect', () => { c.destroy(); resolve(true); });
    c.once('error', () => resolve(false));
  });
}

// A TOML basic string.
export function tomlString(s) {
  return '"' + String(s).replace(/[\\"]/g, (c) => '\\' + c).replace(/\n/g, '\\n').replace(/\t/g, '\\t')
    .replace(/[\u0000-\u001f\u007f]/g, (c) => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0')) + '"';
}

const tomlKey = (k) => (/^[A-Za-z0-9_-]+$/.test(k) ? k : tomlString(k));
const tomlArray = (a) => '[' + a.map(tomlString).join(', ') + ']';

// The `[mcp_servers.NAME]` entry as TOML text: { command, args, env, env_vars, tool_timeout_sec,
// startup_timeout_sec, cwd, enabled }.
export function mcpServerToml(name, { command, args = [], env, env_vars, tool_timeout_sec, startup_timeout_sec, cwd, enabled } = {}) {
  const lines = [`[mcp_servers.${tomlKey(name)}]`, `command = ${tomlString(command)}`, `args = ${tomlArray(args)}`];
  if (env_vars) lines.push(`env_vars = ${tomlArray(env_vars)}`);
  if (tool_timeout_sec !== undefined) lines.push(`tool_timeout_sec = ${Number(tool_timeout_sec)}`);
  if (startup_timeout_sec !== undefined) lines.push(`startup_timeout_sec = ${Number(startup_timeout_sec)}`);
  if (cwd !== undefined) lines.push(`cwd = ${tomlString(cwd)}`);
  if (enabled !== undefined) lines.push(`enabled = ${enabled ? 'true' : 'false'}`);
  if (env && Object.keys(env).length) {
    lines.push(`[mcp_servers.${tomlKey(name)}.env]`);
    for (const [k, v] of Object.entries(env)) lines.push(`${tomlKey(k)} = ${tomlString(v)}`);
  }
  return lines.join('\n') + '\n';
}

// The events of `codex exec --json` (one JSON object a line; other lines are ignored).
export function parseEvents(stdout) {
  const events = [];
  for (const line of stdout.split('\n')) {
    if (!line.trim()) continue;
    try { events.push(JSON.parse(line)); } catch { /* not an event */ }
  }
  return events;
}

// The thread id of a `codex exec --json` run (its `thread.started` event).
export function threadId(events) {
  return events.find((e) => e.type === 'thread.started')?.thread_id;
}

// A temporary world: HOME, CODEX_HOME, TMPDIR, a working directory, and handoffd's socket, store
// and queue.
export class World {
  constructor() {
    this.dir = fs.mkdtempSync(path.join(os.tmpdir(), 'handoff-codex-'));
    this.home = path.join(this.dir, 'home');
    this.codexHome = path.join(this.dir, 'codex-home');
    this.tmp = path.join(this.dir, 'tmp');
    this.work = path.join(this.dir, 'work');
    this.run = path.join(this.dir, 'run');
    this.socket = path.join(this.run, 'handoffd.sock');
    this.artifactDir = path.join(this.dir, 'artifacts');
    this.queueDir = path.join(this.dir, 'queue');
    for (const d of [this.home, this.codexHome, this.tmp, this.work]) fs.mkdirSync(d, { recursive: true });
    fs.mkdirSync(this.run, { mode: 0o700 });
    this.daemon = undefined;
    this.modelUrl = undefined;
    this.mcpServers = new Map();
    this.extraConfig = '';
  }

  // Codex's config for the scripted model at `baseUrl` (`http://127.0.0.1:PORT/v1`). `model`
  // (default `scripted-1`, a name Codex does not know) and top-level `extra` TOML (e.g.
  // `tool_output_token_limit = 12000`).
  configure(baseUrl, { model = 'scripted-1', extra = '' } = {}) {
    this.modelUrl = baseUrl;
    this.model = model;
    this.extraConfig = extra;
    this.writeConfig();
  }

  // Adds (or replaces) an `[mcp_servers.NAME]` entry; see mcpServerToml for the fields.
  addMcpServer(name, entry) {
    this.mcpServers.set(name, entry);
    this.writeConfig();
  }

  configPath() {
    return path.join(this.codexHome, 'config.toml');
  }

  writeConfig() {
    if (!this.modelUrl) throw new Error('configure(baseUrl) first');
    let text = [
      `model = ${tomlString(this.model)}`,
      'model_provider = "scripted"',
      'approval_policy = "never"',
      'sandbox_mode = "danger-full-access"',
      this.extraConfig.trim(),
      '',
      '[model_providers.scripted]',
      'name = "scripted"',
      `base_url = ${tomlString(this.modelUrl)}`,
      'env_key = "SCRIPTED_API_KEY"',
      'wire_api = "responses"',
      '',
    ].filter((l, i, a) => l !== '' || a[i - 1] !== '').join('\n');
    for (const [name, entry] of this.mcpServers) text += '\n' + mcpServerToml(name, entry);
    fs.writeFileSync(this.configPath(), text);
  }

  // The environment Codex runs in.
  env(extra = {}) {
    return {
      PATH: process.env.PATH, LANG: process.env.LANG ?? 'C.UTF-8', TERM: 'dumb',
      HOME: this.home, CODEX_HOME: this.codexHome, TMPDIR: this.tmp, SCRIPTED_API_KEY: 'test-key',
      HANDOFF_SOCKET: this.socket, ...extra,
    };
  }

  async startDaemon() {
    const log = fs.openSync(path.join(this.dir, 'handoffd.log'), 'a', 0o600);
    this.daemon = spawn(handoffdPath, ['--socket', this.socket, '--artifact-dir', this.artifactDir, '--queue-dir', this.queueDir,
      '--cli-path', cliPath, '--log-level', 'debug'], { stdio: ['ignore', log, log] });
    fs.closeSync(log);
    for (let i = 0; i < 500; i++) {
      if (await accepts(this.socket)) return;
      await sleep(10);
    }
    throw new Error(`handoffd did not listen:\n${this.log()}`);
  }

  log() {
    try { return fs.readFileSync(path.join(this.dir, 'handoffd.log'), 'utf8'); } catch { return ''; }
  }

  async stopDaemon() {
    if (!this.daemon) return;
    const d = this.daemon;
    this.daemon = undefined;
    d.kill('SIGTERM');
    await new Promise((r) => (d.exitCode !== null ? r() : d.once('exit', r)));
  }

  artifacts() {
    try { return fs.readdirSync(this.artifactDir).filter((f) => f.endsWith('.txt')); } catch { return []; }
  }

  // Every rollout file under CODEX_HOME/sessions.
  rollouts() {
    const out = [];
    const walk = (d) => {
      let entries = [];
      try { entries = fs.readdirSync(d, { withFileTypes: true }); } catch { return; }
      for (const e of entries) {
        const p = path.join(d, e.name);
        if (e.isDirectory()) walk(p);
        else if (e.name.startsWith('rollout-') && e.name.endsWith('.jsonl')) out.push(p);
      }
    };
    walk(path.join(this.codexHome, 'sessions'));
    return out.sort();
  }

  // The rollout of a thread, parsed: [{ timestamp, type, payload }].
  rollout(thread) {
    const file = this.rollouts().find((f) => f.endsWith(`-${thread}.jsonl`));
    if (!file) return undefined;
    return fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
  }

  // Runs a headless parent `codex exec --json` with `prompt` in the work directory. `model` is
  // the scripted model (startModel's result), whose requests made during this run are returned.
  // Resolves to { code, signal, stdout, stderr, events, thread, last, requests, ms }.
  async exec(prompt, { model, args = [], env = {}, cwd = this.work, timeoutMs = 240_000, resume } = {}) {
    const started = Date.now();
    const lastFile = path.join(this.dir, `last-${started}-${Math.random().toString(36).slice(2)}.txt`);
    const from = model ? model.requests.length : 0;
    const argv = ['exec', ...(resume ? ['resume', resume] : []), '--json', '--skip-git-repo-check',
      '--dangerously-bypass-approvals-and-sandbox', '-o', lastFile, ...args, prompt];
    const child = spawn(codexPath, argv, { cwd, env: this.env(env), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    const [code, signal] = await new Promise((r) => child.on('close', (c, s) => r([c, s])));
    clearTimeout(timer);
    let last;
    try { last = fs.readFileSync(lastFile, 'utf8'); } catch { last = undefined; }
    const events = parseEvents(stdout);
    return {
      code, signal, stdout, stderr, events, thread: threadId(events), last,
      requests: model ? model.requests.slice(from) : [], ms: Date.now() - started,
    };
  }

  async close() {
    await this.stopDaemon();
    fs.rmSync(this.dir, { recursive: true, force: true, maxRetries: 20, retryDelay: 100 });
  }
}

// A child's long answer: `finding 0001 ...` lines, then the verdict.
export function longAnswer(lines, width, tag = '') {
  const out = [];
  for (let i = 1; i < lines; i++) out.push(`${tag}finding ${String(i).padStart(4, '0')} ` + 'x'.repeat(Math.max(0, width - 14 - tag.length)));
  out.push(`${tag}VERDICT: ship it`);
  return out.join('\n');
}
