// A real Gemini CLI 0.61.0 (this folder's pinned npm install) headless (`gemini -p`) on the
// scripted Gemini API, with a real handoffd on a temporary socket, a temporary HOME and
// handoff's hooks set up by `handoff setup gemini`.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { World as BaseWorld, cliPath, handoffdPath, longAnswer, runProcess } from '../support/world.mjs';

export { cliPath, handoffdPath, longAnswer };

const here = path.dirname(fileURLToPath(import.meta.url));
export const geminiPath = path.join(here, 'node_modules/@google/gemini-cli/bundle/gemini.js');

// What Gemini CLI's read_file gives its model for lines start..end of a file it reads whole
// otherwise: a header saying the range, then the lines (1-based, inclusive).
export function readFileBody(output) {
  const marker = '--- FILE CONTENT (truncated) ---\n';
  const at = output.indexOf(marker);
  return at < 0 ? output : output.slice(at + marker.length);
}

// A temporary world (../support/world.mjs): HOME (with Gemini CLI's settings and a `reporter`
// agent), a project directory, and handoffd's socket, store and queue.
export class World extends BaseWorld {
  constructor() {
    super('handoff-gemini-', { home: 'home', project: 'project' });
    fs.mkdirSync(path.join(this.home, '.gemini', 'agents'), { recursive: true });
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

  // `gemini -p PROMPT` headless, JSON output; resolves with its exit code, stdout and stderr.
  gemini(prompt, extra = {}) {
    return runProcess(process.execPath, [geminiPath, '-p', prompt, '-m', 'gemini-2.5-flash', '--approval-mode', 'yolo', '-o', 'json'],
      { cwd: this.project, env: this.env(extra) });
  }
}
