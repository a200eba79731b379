// A real Codex CLI 0.171.0 (this folder's pinned npm install; CODEX_BIN names another: the previous
// proven 0.169.0, tests/codex/previous) on the scripted Responses model, with a real handoffd on a
// temporary socket and a temporary HOME / CODEX_HOME / TMPDIR.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { World as BaseWorld, cliPath, handoffdPath, longAnswer, parseEvents, runProcess } from '../support/world.mjs';

export { cliPath, handoffdPath, longAnswer, parseEvents };

const here = path.dirname(fileURLToPath(import.meta.url));
// The native binary (the npm wrapper `node_modules/.bin/codex` only execs it).
export const codexPath = process.env.CODEX_BIN
  ?? path.join(here, 'node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex');

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

// The thread id of a `codex exec --json` run (its `thread.started` event).
export function threadId(events) {
  return events.find((e) => e.type === 'thread.started')?.thread_id;
}

// A temporary world (../support/world.mjs): HOME, CODEX_HOME, TMPDIR, a working directory, and
// handoffd's socket, store and queue; Codex's config.toml.
export class World extends BaseWorld {
  constructor() {
    super('handoff-codex-', { home: 'home', codexHome: 'codex-home', tmp: 'tmp', work: 'work' });
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
  // (A variable `extra` sets to null is left out.)
  env(extra = {}) {
    const vars = {
      PATH: process.env.PATH, LANG: process.env.LANG ?? 'C.UTF-8', TERM: 'dumb',
      HOME: this.home, CODEX_HOME: this.codexHome, TMPDIR: this.tmp, SCRIPTED_API_KEY: 'test-key',
      HANDOFF_SOCKET: this.socket, ...extra,
    };
    for (const [k, v] of Object.entries(vars)) if (v === null) delete vars[k];
    return vars;
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
    const run = await runProcess(codexPath, argv, { cwd, env: this.env(env), timeoutMs });
    let last;
    try { last = fs.readFileSync(lastFile, 'utf8'); } catch { last = undefined; }
    const events = parseEvents(run.stdout);
    return { ...run, events, thread: threadId(events), last, requests: model ? model.requests.slice(from) : [] };
  }
}
