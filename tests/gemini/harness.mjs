// A real Gemini CLI 0.61.0 (this folder's pinned npm install) headless (`gemini -p`) on the
// scripted Gemini API, with a real handoffd on a temporary socket, a temporary HOME and
// handoff's hooks set up by `handoff setup gemini`.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');
export const geminiPath = path.join(here, 'node_modules/@google/gemini-cli/bundle/gemini.js');
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

export function longAnswer(lines, width, tag = '') {
  const out = [];
  for (let i = 1; i < lines; i++) out.push(`${tag}finding ${String(i).padStart(4, '0')} ` + 'x'.repeat(Math.max(0, width - 14 - tag.length)));
  out.push(`${tag}VERDICT: ship it`);
  return out.join('\n');
}

// What Gemini CLI's read_file gives its model for lines start..end of a file it reads whole
// otherwise: a header saying the range, then the lines (1-based, inclusive).
export function readFileBody(output) {
  const marker = '--- FILE CONTENT (truncated) ---\n';
  const at = output.indexOf(marker);
  return at < 0 ? output : output.slice(at + marker.length);
}

// A temporary world: HOME (with Gemini CLI's settings and a `reporter` agent), a project
// directory, and handoffd's socket, store and queue.
export class World {
  constructor() {
    this.dir = fs.mkdtempSync(path.join(os.tmpdir(), 'handoff-gemini-'));
    this.home = path.join(this.dir, 'home');
    this.project = path.join(this.dir, 'project');
    this.socket = path.join(this.dir, 'handoffd.sock');
    this.artifactDir = path.join(this.dir, 'artifacts');
    this.queueDir = path.join(this.dir, 'queue');
    fs.mkdirSync(path.join(this.home, '.gemini', 'agents'), { recursive: true });
    fs.mkdirSync(this.project, { recursive: true });
    fs.writeFileSync(path.join(this.home, '.gemini', 'settings.json'), JSON.stringify({
      security: { auth: { selectedType: 'gemini-api-key' }, folderTrust: { enabled: false } },
      privacy: { usageStatisticsEnabled: false },
      general: { enableAutoUpdate: false, enableAutoUpdateNotification: false },
      telemetry: { enabled: false },
    }, null, 2));
    fs.writeFileSync(path.join(this.home, '.gemini', 'agents', 'reporter.md'),
      '---\nname: reporter\ndescription: Writes the report it is asked for.\nkind: local\ntools: []\nmax_turns: 5\n---\nYou write reports.\n');
  }

  env(extra = {}) {
    return {
      PATH: process.env.PATH, LANG: 'C.UTF-8', TERM: 'dumb', HOME: this.home, TMPDIR: this.dir,
      GEMINI_API_KEY: 'dummy', GEMINI_CLI_TRUST_WORKSPACE: 'true', GOOGLE_GEMINI_BASE_URL: this.baseUrl,
      HANDOFF_SOCKET: this.socket, HANDOFF_AUTOSTART: '0', NO_COLOR: '1', ...extra,
    };
  }

  setup(args = []) {
    const r = spawnSync(cliPath, ['setup', 'gemini', ...args], { env: this.env(), encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`setup gemini failed: ${r.stderr}`);
    return r;
  }

  async startDaemon() {
    const log = fs.openSync(path.join(this.dir, 'handoffd.log'), 'a', 0o600);
    this.daemon = spawn(handoffdPath, ['--socket', this.socket, '--artifact-dir', this.artifactDir, '--queue-dir', this.queueDir,
      '--cli-path', cliPath], { stdio: ['ignore', log, log] });
    fs.closeSync(log);
    for (let i = 0; i < 500; i++) {
      if (await accepts(this.socket)) return;
      await sleep(10);
    }
    throw new Error('handoffd did not listen');
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

  // `gemini -p PROMPT` headless, JSON output; resolves with its exit code, stdout and stderr.
  gemini(prompt, extra = {}) {
    return new Promise((resolve) => {
      const child = spawn(process.execPath, [geminiPath, '-p', prompt, '-m', 'gemini-2.5-flash', '--approval-mode', 'yolo', '-o', 'json'],
        { cwd: this.project, env: this.env(extra), stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d) => (stdout += d));
      child.stderr.on('data', (d) => (stderr += d));
      child.on('close', (code) => resolve({ code, stdout, stderr }));
    });
  }

  async close() {
    await this.stopDaemon();
    if (!process.env.HANDOFF_KEEP) fs.rmSync(this.dir, { recursive: true, force: true });
  }
}
