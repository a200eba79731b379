// A real opencode 1.18.33 (this folder's pinned npm install) on the scripted Chat Completions
// model, with a real handoffd on a temporary socket and a temporary HOME / XDG dirs / TMPDIR, kept
// off the network (no model list, no update check, its plugin npm install pointed at a dead port).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');
// The native binary, from its own npm package (package.json says why not the opencode-ai wrapper).
export const opencodePath = process.env.OPENCODE_BIN ?? path.join(here, 'node_modules/opencode-linux-x64/bin/opencode');
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

// `lines` lines of `width` bytes ("finding NNNN xxx..."), the last one the verdict:
// longAnswer(3001, 57) is 171,016 bytes.
export function longAnswer(lines, width, tag = '') {
  const out = [];
  for (let i = 1; i < lines; i++) out.push(`${tag}finding ${String(i).padStart(4, '0')} ` + 'x'.repeat(Math.max(0, width - 14 - tag.length)));
  out.push(`${tag}VERDICT: ship it`);
  return out.join('\n');
}

// The events of `opencode run --format json` (one JSON object a line; other lines are ignored).
export function parseEvents(stdout) {
  const events = [];
  for (const line of stdout.split('\n')) {
    if (!line.trim()) continue;
    try { events.push(JSON.parse(line)); } catch { /* not an event */ }
  }
  return events;
}

// A temporary world: HOME, XDG dirs, TMPDIR, a project directory, and handoffd's socket, store and
// queue.
export class World {
  constructor() {
    this.dir = fs.mkdtempSync(path.join(os.tmpdir(), 'handoff-opencode-'));
    this.home = path.join(this.dir, 'home');
    this.config = path.join(this.dir, 'config');
    this.data = path.join(this.dir, 'data');
    this.cache = path.join(this.dir, 'cache');
    this.state = path.join(this.dir, 'state');
    this.tmp = path.join(this.dir, 'tmp');
    this.work = path.join(this.dir, 'work');
    this.run = path.join(this.dir, 'run');
    this.socket = path.join(this.run, 'handoffd.sock');
    this.artifactDir = path.join(this.dir, 'artifacts');
    this.queueDir = path.join(this.dir, 'queue');
    for (const d of [this.home, this.config, this.data, this.cache, this.state, this.tmp, this.work]) fs.mkdirSync(d, { recursive: true });
    fs.mkdirSync(this.run, { mode: 0o700 });
    this.daemon = undefined;
  }

  // The project's opencode.json for the scripted model at `baseUrl`, merged with `extra`; opencode's
  // default permissions, as its users have them.
  configure(baseUrl, extra = {}) {
    const config = {
      $schema: 'https://opencode.ai/config.json',
      model: 'scripted/scripted-1',
      small_model: 'scripted/scripted-1',
      autoupdate: false,
      share: 'disabled',
      provider: {
        scripted: {
          npm: '@ai-sdk/openai-compatible',
          name: 'Scripted',
          options: { baseURL: baseUrl, apiKey: 'dummy' },
          models: { 'scripted-1': { name: 'Scripted 1', tool_call: true, limit: { context: 200000, output: 32000 } } },
        },
      },
      ...extra,
    };
    fs.writeFileSync(path.join(this.work, 'opencode.json'), JSON.stringify(config, null, 2) + '\n');
  }

  // The environment opencode runs in.
  env(extra = {}) {
    return {
      PATH: process.env.PATH, LANG: process.env.LANG ?? 'C.UTF-8', TERM: 'dumb',
      HOME: this.home, XDG_CONFIG_HOME: this.config, XDG_DATA_HOME: this.data, XDG_CACHE_HOME: this.cache,
      XDG_STATE_HOME: this.state, TMPDIR: this.tmp,
      OPENCODE_DISABLE_AUTOUPDATE: 'true', OPENCODE_DISABLE_MODELS_FETCH: 'true', OPENCODE_DISABLE_SHARE: 'true',
      npm_config_offline: 'true', npm_config_registry: 'http://127.0.0.1:9/',
      HANDOFF_SOCKET: this.socket, HANDOFF_AUTOSTART: '0', ...extra,
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
    try { return fs.readdirSync(this.artifactDir).filter((f) => f.endsWith('.txt')).map((f) => path.join(this.artifactDir, f)); } catch { return []; }
  }

  // Runs a headless `opencode run --format json PROMPT` in the project directory. `model` is the
  // scripted model (startModel's result), whose requests made during this run are returned.
  // Resolves to { code, signal, stdout, stderr, events, requests, ms }.
  async opencode(prompt, { model, args = [], env = {}, cwd = this.work, timeoutMs = 120_000 } = {}) {
    const started = Date.now();
    const from = model ? model.requests.length : 0;
    const child = spawn(opencodePath, ['run', '--format', 'json', ...args, prompt], { cwd, env: this.env(env), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    const [code, signal] = await new Promise((r) => child.on('close', (c, s) => r([c, s])));
    clearTimeout(timer);
    return { code, signal, stdout, stderr, events: parseEvents(stdout), requests: model ? model.requests.slice(from) : [], ms: Date.now() - started };
  }

  async close() {
    await this.stopDaemon();
    fs.rmSync(this.dir, { recursive: true, force: true, maxRetries: 20, retryDelay: 100 });
  }
}
