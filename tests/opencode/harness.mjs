// A real opencode 1.18.33 (this folder's pinned npm install) on the scripted Chat Completions
// model, with a real handoffd on a temporary socket and a temporary HOME / XDG dirs / TMPDIR, kept
// off the network (no model list, no update check, its plugin npm install pointed at a dead port).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { parentScript } from '../support/scripted-chat.mjs';
import { World as BaseWorld, cliPath, handoffdPath, loadScaled, longAnswer, parseEvents, runProcess } from '../support/world.mjs';

export { cliPath, handoffdPath, longAnswer, parseEvents };

const here = path.dirname(fileURLToPath(import.meta.url));
// The native binary, from its own npm package (package.json says why not the opencode-ai wrapper).
export const opencodePath = process.env.OPENCODE_BIN ?? path.join(here, 'node_modules/opencode-linux-x64/bin/opencode');

// A temporary world (../support/world.mjs): HOME, XDG dirs, TMPDIR, a project directory, and
// handoffd's socket, store and queue. `binary` runs in place of opencode (a fork: Kilo Code's CLI,
// tests/kilo), with `env` beside opencode's own settings.
export class World extends BaseWorld {
  constructor({ binary = opencodePath, env = {} } = {}) {
    super('handoff-opencode-', {
      home: 'home', config: 'config', data: 'data', cache: 'cache', state: 'state', tmp: 'tmp', work: 'work',
    });
    this.binary = binary;
    this.binaryEnv = env;
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
      HANDOFF_SOCKET: this.socket, HANDOFF_AUTOSTART: '0', ...this.binaryEnv, ...extra,
    };
  }

  // The artifact store's `.txt` files, as full paths.
  artifacts() {
    return super.artifacts().map((f) => path.join(this.artifactDir, f));
  }

  // Runs a headless `opencode run --format json PROMPT` in the project directory. `model` is the
  // scripted model (startModel's result), whose requests made during this run are returned.
  // Resolves to { code, signal, stdout, stderr, events, requests, ms }.
  async opencode(prompt, { model, args = [], env = {}, cwd = this.work, timeoutMs = loadScaled(120_000) } = {}) {
    const from = model ? model.requests.length : 0;
    const run = await runProcess(this.binary, ['run', '--format', 'json', ...args, prompt], { cwd, env: this.env(env), timeoutMs });
    return { ...run, events: parseEvents(run.stdout), requests: model ? model.requests.slice(from) : [] };
  }
}

// The parent's script (../support/scripted-chat.mjs parentScript); opencode's own requests (its
// session title) get "Title".
export const script = (steps, answers) => parentScript(steps, answers, { other: 'Title' });

// The footer of a bounded text: the full text's path and its read calls.
export function footer(text) {
  const full = /Full text: (\/\S+?\.txt)/.exec(text)?.[1];
  const reads = [...text.matchAll(/read offset=(\d+) limit=(\d+)/g)].map((m) => ({ offset: Number(m[1]), limit: Number(m[2]) }));
  return { full, reads };
}

// The lines a read tool output shows ("N: line"), as { first, lines }.
export function readLines(output) {
  const body = /<content>\n([\s\S]*?)\n\n\((?:End of file|Showing lines|Output capped)/.exec(output)?.[1];
  assert.ok(body !== undefined, `not a read output: ${output.slice(0, 300)}`);
  const lines = body.split('\n');
  const first = Number(/^(\d+): /.exec(lines[0])[1]);
  return { first, lines: lines.map((l, i) => { const p = `${first + i}: `; assert.ok(l.startsWith(p), l.slice(0, 40)); return l.slice(p.length); }) };
}

export const taskFrame = /^<task id="ses_[^"]+" state="completed">\n<task_result>\n([\s\S]*)\n<\/task_result>\n<\/task>$/;

// The footer's reads of `bounded` as the harness's own read tool returned them (`pages`, in the
// footer's order): each the lines it names of `full` and nothing else, together exactly the
// omitted ones. Returns how many there were.
export function assertPagesExact(bounded, pages, full) {
  const omitted = /omitted lines (\d+)-(\d+)/.exec(bounded);
  assert.ok(omitted, bounded.slice(-600));
  const { reads } = footer(bounded);
  assert.equal(pages.length, reads.length);
  const all = full.split('\n');
  const got = pages.flatMap((o, i) => {
    assert.equal(o.name, 'read');
    const { first, lines } = readLines(o.text);
    assert.equal(first, reads[i].offset);
    assert.deepEqual(lines, all.slice(reads[i].offset - 1, reads[i].offset - 1 + reads[i].limit));
    return lines;
  });
  assert.deepEqual(got, all.slice(Number(omitted[1]) - 1, Number(omitted[2])));
  return reads.length;
}
