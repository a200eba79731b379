// A real cline 3.0.65 (this folder's pinned npm install of its compiled binary) on the scripted
// Chat Completions model (../support/scripted-chat.mjs), with a real handoffd on a temporary
// socket and a temporary HOME / XDG dirs / TMPDIR. cline runs a session in a detached hub daemon,
// started by the first run with that run's environment and kept by later ones: each world gives
// its hub a port of its own (CLINE_HUB_PORT, so it never reaches another world's hub or a user's
// on the default 25463) and ends it with the world.
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { World as BaseWorld, cliPath, handoffdPath, longAnswer, parseEvents, runProcess } from '../support/world.mjs';

export { cliPath, handoffdPath, longAnswer, parseEvents };

const here = path.dirname(fileURLToPath(import.meta.url));
// The compiled binary, from its own npm package (package.json says why not the cline wrapper).
export const clinePath = process.env.CLINE_BIN ?? path.join(here, 'node_modules/@cline/cli-linux-x64/bin/cline');

// A TCP port nothing listens on now, on 127.0.0.1.
export function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

export class World extends BaseWorld {
  constructor(hubPort) {
    super('handoff-cline-', { home: 'home', config: 'config', data: 'data', cache: 'cache', state: 'state', tmp: 'tmp', work: 'work' });
    this.hubPort = hubPort;
    this.clineDir = path.join(this.home, '.cline');
  }

  static async create() {
    return new World(await freePort());
  }

  // cline's provider settings for the scripted model at `baseUrl` (what `cline auth -p
  // openai-compatible -k dummy -b URL -m scripted-1` writes).
  configure(baseUrl) {
    const dir = path.join(this.clineDir, 'data', 'settings');
    fs.mkdirSync(dir, { recursive: true });
    const settings = { provider: 'openai-compatible', apiKey: 'dummy', model: 'scripted-1', baseUrl };
    fs.writeFileSync(path.join(dir, 'providers.json'), JSON.stringify({
      version: 1, lastUsedProvider: 'openai-compatible', modes: {},
      providers: { 'openai-compatible': { settings, updatedAt: new Date().toISOString(), tokenSource: 'manual' } },
    }, null, 2) + '\n');
  }

  // The environment cline (and so its hub, its plugin sandbox and handoff's hook) runs in.
  env(extra = {}) {
    return {
      PATH: process.env.PATH, LANG: process.env.LANG ?? 'C.UTF-8', TERM: 'dumb',
      HOME: this.home, XDG_CONFIG_HOME: this.config, XDG_DATA_HOME: this.data, XDG_CACHE_HOME: this.cache,
      XDG_STATE_HOME: this.state, TMPDIR: this.tmp,
      CLINE_HUB_PORT: String(this.hubPort), CLINE_NO_AUTO_UPDATE: '1',
      HANDOFF_SOCKET: this.socket, HANDOFF_AUTOSTART: '0', ...extra,
    };
  }

  // The artifact store's `.txt` files, as full paths.
  artifacts() {
    return super.artifacts().map((f) => path.join(this.artifactDir, f));
  }

  // Runs a headless `cline --json PROMPT` in the project directory. `model` is the scripted model
  // (startModel's result), whose requests made during this run are returned. Resolves to
  // { code, signal, stdout, stderr, events, requests, ms }.
  async cline(prompt, { model, env = {}, cwd = this.work, timeoutMs = 120_000 } = {}) {
    const from = model ? model.requests.length : 0;
    const run = await runProcess(clinePath, ['--json', prompt], { cwd, env: this.env(env), timeoutMs });
    return { ...run, events: parseEvents(run.stdout), requests: model ? model.requests.slice(from) : [] };
  }

  // This world's cline hub daemons (`--cline-hub-daemon ... --port PORT`): their pids, from /proc.
  hubs() {
    const out = [];
    for (const name of fs.readdirSync('/proc')) {
      if (!/^\d+$/.test(name)) continue;
      let argv;
      try { argv = fs.readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0'); } catch { continue; }
      if (argv.includes('--cline-hub-daemon') && argv.some((a, i) => a === '--port' && argv[i + 1] === String(this.hubPort))) out.push(Number(name));
    }
    return out;
  }

  async close() {
    // The hub leads a session of its own, its plugin sandbox in it: the group goes.
    for (const pid of this.hubs()) try { process.kill(-pid, 'SIGKILL'); } catch { try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ } }
    await super.close();
  }
}
