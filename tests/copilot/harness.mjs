// A real GitHub Copilot CLI 1.0.102 (this folder's pinned npm install: its native binary, from
// @github/copilot-linux-x64) on the scripted Chat Completions model (../support/scripted-chat.mjs),
// offline (COPILOT_OFFLINE, a BYOK provider on loopback, no auto-update), with a real handoffd
// on a temporary socket and a temporary HOME / COPILOT_HOME / XDG dirs / TMPDIR.
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { World as BaseWorld, cliPath, handoffdPath, longAnswer, parseEvents, runProcess } from '../support/world.mjs';

export { cliPath, handoffdPath, longAnswer, parseEvents };

const here = path.dirname(fileURLToPath(import.meta.url));
// The native binary itself (the @github/copilot wrapper only finds and spawns it).
export const copilotPath = process.env.COPILOT_BIN ?? path.join(here, 'node_modules/@github/copilot-linux-x64/copilot');
// The binary unpacks its JavaScript package (about 235 MB) on its first run: once for the suite,
// beside node_modules, not once per world.
const packageCache = process.env.COPILOT_PKG_CACHE_HOME ?? path.join(here, 'node_modules/.copilot-pkg-cache');

// A temporary world (../support/world.mjs): HOME, COPILOT_HOME, XDG dirs, TMPDIR, a project
// directory, and handoffd's socket, store and queue.
export class World extends BaseWorld {
  constructor() {
    super('handoff-copilot-', {
      home: 'home', copilotHome: 'home/.copilot', config: 'config', data: 'data', cache: 'cache', state: 'state',
      tmp: 'tmp', work: 'work',
    });
  }

  // The environment Copilot (and `handoff setup copilot`) runs in; `model` the scripted model.
  env(model, extra = {}) {
    return {
      PATH: process.env.PATH, LANG: process.env.LANG ?? 'C.UTF-8', TERM: 'dumb',
      HOME: this.home, COPILOT_HOME: this.copilotHome, XDG_CONFIG_HOME: this.config, XDG_DATA_HOME: this.data,
      XDG_CACHE_HOME: this.cache, XDG_STATE_HOME: this.state, TMPDIR: this.tmp, COPILOT_PKG_CACHE_HOME: packageCache,
      COPILOT_AUTO_UPDATE: 'false', COPILOT_OFFLINE: 'true', COPILOT_PROVIDER_TYPE: 'openai', COPILOT_MODEL: 'gpt-4.1',
      ...(model ? { COPILOT_PROVIDER_BASE_URL: model.baseUrl } : {}),
      HANDOFF_SOCKET: this.socket, HANDOFF_AUTOSTART: '0', ...extra,
    };
  }

  settingsPath() {
    return path.join(this.copilotHome, 'settings.json');
  }

  // The artifact store's `.txt` files, as full paths.
  artifacts() {
    return super.artifacts().map((f) => path.join(this.artifactDir, f));
  }

  // Runs a headless `copilot -p PROMPT --allow-all --output-format json` in the project
  // directory. Resolves to { code, signal, stdout, stderr, events, requests, ms }: the scripted
  // model's requests made during this run.
  async copilot(prompt, { model, args = [], env = {}, cwd = this.work, timeoutMs = 120_000 } = {}) {
    const from = model ? model.requests.length : 0;
    const run = await runProcess(copilotPath, ['-p', prompt, '--allow-all', '--output-format', 'json', ...args],
      { cwd, env: this.env(model, env), timeoutMs });
    return { ...run, events: parseEvents(run.stdout), requests: model ? model.requests.slice(from) : [] };
  }
}
