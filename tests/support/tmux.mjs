// A harness's terminal UI as people run it: the program in a terminal (tmux, a private server per
// session, no user tmux config), typed into with send-keys and read with capture-pane. What
// `screen()` gives is the whole scrollback as the user could scroll through it.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

import { sleep, waitFor } from './world.mjs';

// `s` as one POSIX shell word.
export const shellWord = (s) => `'${String(s).replace(/'/g, `'\\''`)}'`;

// Runs `tmux -S socket ARGS...`; its stdout, or throws with its stderr.
export function tmux(socket, ...args) {
  const r = spawnSync('tmux', ['-S', socket, ...args], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`tmux ${args[0]} failed (${r.status}): ${r.stderr}`);
  return r.stdout;
}

export class TmuxSession {
  // Runs `argv` in `cwd` with exactly `env` (nothing inherited; a value of null is left out), in
  // a `cols` x `rows` terminal whose socket lives in `dir`. TERM is `term` whatever `env` says:
  // the terminal is tmux's, and a headless world's env may say TERM=dumb.
  constructor({ dir, argv, cwd, env, cols = 160, rows = 50, history = 100_000, term = 'xterm-256color' }) {
    this.socket = path.join(dir, 'tmux.sock');
    const vars = Object.entries({ ...env, TERM: term }).filter(([, v]) => v !== null && v !== undefined);
    const exports = vars.map(([k, v]) => `${k}=${shellWord(v)}`).join(' ');
    // The history limit is set before the session: a pane keeps the limit it was made with.
    tmux(this.socket, '-f', '/dev/null', 'start-server', ';', 'set-option', '-g', 'history-limit', String(history), ';',
      'new-session', '-d', '-x', String(cols), '-y', String(rows), '-c', cwd,
      `exec env -i ${exports} ${argv.map(shellWord).join(' ')}`);
    this.pid = Number(tmux(this.socket, 'display-message', '-p', '#{pane_pid}').trim());
  }

  // The scrollback and the visible screen, as text.
  screen() {
    return tmux(this.socket, 'capture-pane', '-p', '-S', '-');
  }

  // The screen once `pattern` matches it; throws with the screen after `timeoutMs`.
  async waitFor(pattern, timeoutMs = 60_000) {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const s = this.screen();
      if (pattern.test(s)) return s;
      if (Date.now() > until) throw new Error(`the screen never showed ${pattern}:\n${s}`);
      await sleep(200);  // the poll interval: a screen is not an event
    }
  }

  // The screen once it has not changed for `quietMs` (a harness redraws hints and spinners for a
  // while after a reply); throws with the screen after `timeoutMs`.
  async settled(quietMs = 1_500, timeoutMs = 60_000) {
    const end = Date.now() + timeoutMs;
    let last = this.screen();
    let since = Date.now();
    for (;;) {
      await sleep(200);  // the poll interval: a screen is not an event
      const now = this.screen();
      if (now !== last) [last, since] = [now, Date.now()];
      else if (Date.now() - since >= quietMs) return now;
      if (Date.now() > end) throw new Error(`the screen never settled:\n${now}`);
    }
  }

  // Types `text` literally.
  type(text) {
    tmux(this.socket, 'send-keys', '-l', text);
  }

  // Presses keys by tmux's names (Enter, Escape, C-c...).
  key(...names) {
    tmux(this.socket, 'send-keys', ...names);
  }

  // Ends the session; resolves once the program has exited (killed after `timeoutMs`).
  async close(timeoutMs = 20_000) {
    try { tmux(this.socket, 'kill-server'); } catch { /* gone */ }
    await waitFor('the program to exit', () => !fs.existsSync(`/proc/${this.pid}`), { timeoutMs })
      .catch(() => { try { process.kill(this.pid, 'SIGKILL'); } catch { /* gone */ } });
  }
}

// The lines of `b` that `a` lacks, as a multiset (a line twice in `b`, once in `a`, counts once):
// what one session's screen has that another's has not.
export function linesMissing(a, b) {
  const left = new Map();
  for (const l of a) left.set(l, (left.get(l) ?? 0) + 1);
  const out = [];
  for (const l of b) {
    const n = left.get(l) ?? 0;
    if (n > 0) left.set(l, n - 1);
    else out.push(l);
  }
  return out;
}
