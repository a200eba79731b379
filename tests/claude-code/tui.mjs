// The interactive Claude Code, as people run it: `claude` in a terminal (tmux, a private server
// per test), typed into with send-keys and read with capture-pane, on the scripted model.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

import { claudePath } from './harness.mjs';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
export const apiKey = 'test-key-interactive-0123456789';

function tmux(socket, ...args) {
  const r = spawnSync('tmux', ['-S', socket, ...args], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`tmux ${args[0]} failed (${r.status}): ${r.stderr}`);
  return r.stdout;
}

// `claude` under tmux in `world` (its HOME, working directory and handoffd socket), talking to
// `modelUrl`. `mode`: a --permission-mode ('default', 'acceptEdits', 'auto'); none: Claude Code's own
// default (auto mode in 2.1.328 and 2.1.332).
export class Tui {
  constructor(world, modelUrl, { mode = 'default', env = {}, rows = 50 } = {}) {
    this.world = world;
    this.socket = path.join(world.dir, 'tmux.sock');
    // First-run screens done and the key approved, as after a user's first session.
    const state = path.join(world.home, '.claude.json');
    let prior = {};
    try { prior = JSON.parse(fs.readFileSync(state, 'utf8')); } catch { /* none yet */ }
    fs.writeFileSync(state, JSON.stringify({
      ...prior,
      hasCompletedOnboarding: true,
      customApiKeyResponses: { approved: [apiKey, apiKey.slice(-20)], rejected: [] },
      projects: { [world.work]: { hasTrustDialogAccepted: true, hasCompletedProjectOnboarding: true } },
    }));
    const vars = {
      HOME: world.home, ANTHROPIC_BASE_URL: modelUrl, ANTHROPIC_API_KEY: apiKey,
      DISABLE_TELEMETRY: '1', CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1', DISABLE_AUTOUPDATER: '1',
      HANDOFF_SOCKET: world.socket, TERM: 'xterm-256color', ...env,
    };
    // A variable set to null is taken out of what tmux's server passes on.
    const entries = Object.entries(vars);
    const exports = [...entries.filter(([, v]) => v === null).map(([k]) => `-u ${k}`),
      ...entries.filter(([, v]) => v !== null).map(([k, v]) => `${k}=${shellWord(v)}`)].join(' ');
    const args = mode ? ` --permission-mode ${mode}` : '';
    // A scrollback long enough for a whole session, set before the window exists.
    tmux(this.socket, '-f', '/dev/null', 'start-server', ';', 'set-option', '-g', 'history-limit', '100000', ';',
      'new-session', '-d', '-x', '200', '-y', String(rows), '-c', world.work, `env ${exports} ${shellWord(claudePath)}${args}; sleep 600`);
    // Everything the terminal was sent, for what scrolled past or was redrawn over.
    this.ttyLog = path.join(world.dir, 'tty.log');
    tmux(this.socket, 'pipe-pane', '-o', `cat >> ${shellWord(this.ttyLog)}`);
  }

  // What the terminal was sent so far, escape sequences removed.
  printed() {
    let raw = '';
    try { raw = fs.readFileSync(this.ttyLog, 'utf8'); } catch { return ''; }
    return raw
      .replace(/\x1b\[(\d*)C/g, (_, n) => ' '.repeat(Number(n || 1)))  // cursor forward: spaces
      .replace(/\x1b\[[0-9;?<>=]*[ -\/]*[@-~]/g, '')
      .replace(/\x1b\][^\x07]*(\x07|\x1b\\)/g, '')
      .replace(/\x1b[()][A-Z0-9]|\x1b[78]/g, '');
  }

  // The whole scrollback; visible(): only what is on the terminal now.
  screen() {
    return tmux(this.socket, 'capture-pane', '-p', '-S', '-');
  }

  visible() {
    return tmux(this.socket, 'capture-pane', '-p');
  }

  // Resolves with the screen (`read()`: the scrollback unless told) once it shows `pattern`.
  async waitFor(pattern, timeoutMs = 60_000, read = () => this.screen()) {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const s = read();
      if (pattern.test(s)) return s;
      if (Date.now() > until) throw new Error(`the screen never showed ${pattern}:\n${s}`);
      await sleep(200);  // the poll interval
    }
  }

  // Types `text` as a user would and presses Enter once the input box shows it (an Enter that
  // came first would send the prompt cut short). Keys sent while the just drawn prompt does not
  // take input yet are lost: typed again after `retypeMs` without an echo.
  async type(text, { timeoutMs = 15_000, retypeMs = 5_000 } = {}) {
    const shown = () => this.visible().split(text).length - 1;
    const before = shown();
    tmux(this.socket, 'send-keys', '-l', text);
    const start = Date.now();
    let retyped = false;
    while (shown() <= before) {
      if (Date.now() > start + timeoutMs) throw new Error(`the input box never showed ${JSON.stringify(text)}:\n${this.visible()}`);
      if (!retyped && Date.now() > start + retypeMs) {
        tmux(this.socket, 'send-keys', '-l', text);
        retyped = true;
      }
      await sleep(50);  // the poll interval
    }
    tmux(this.socket, 'send-keys', 'Enter');
  }

  keys(...keys) {
    tmux(this.socket, 'send-keys', ...keys);
  }

  // Ends Claude Code and everything it started (hooks still running, detached ones included),
  // and waits until they are gone, so none writes into the world after the test.
  async close() {
    let pane;
    try { pane = Number(tmux(this.socket, 'list-panes', '-F', '#{pane_pid}').trim()); } catch { pane = undefined; }
    const all = pane ? descendants(pane) : [];
    spawnSync('tmux', ['-S', this.socket, 'kill-server']);
    for (const pid of all) try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ }
    for (let i = 0; i < 100 && all.some(alive); i++) await sleep(50);  // poll until gone, 5 s at most
  }
}

// Every process below `pid` (by /proc's parent links), deepest last.
function descendants(pid) {
  const parentOf = new Map();
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${name}/stat`, 'utf8');
      parentOf.set(Number(name), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch { /* gone meanwhile */ }
  }
  const out = [];
  const walk = (p) => {
    for (const [child, parent] of parentOf) if (parent === p) { out.push(child); walk(child); }
  };
  walk(pid);
  return out;
}

function alive(pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat[stat.lastIndexOf(')') + 2] !== 'Z';
  } catch {
    return false;
  }
}

export function shellWord(s) {
  return `'${String(s).replace(/'/g, `'\\''`)}'`;
}
