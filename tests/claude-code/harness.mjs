// A real Claude Code 2.1.332 (this folder's pinned npm install) on the scripted model, with a
// real handoffd on a temporary socket and a temporary HOME, for the hook tests.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { World as BaseWorld, cliPath, handoffdPath, longAnswer, runProcess } from '../support/world.mjs';

export { cliPath, handoffdPath, longAnswer };

const here = path.dirname(fileURLToPath(import.meta.url));
// The pinned Claude Code (this folder's package.json), or the one HANDOFF_CLAUDE_CODE names (a
// `claude` executable: scripts/harness-version.sh claude-code VERSION runs the suites against another release).
export const claudePath = process.env.HANDOFF_CLAUDE_CODE || path.join(here, 'node_modules/.bin/claude');

// A temporary world (../support/world.mjs): HOME, a working directory, and handoffd's socket,
// store and queue.
export class World extends BaseWorld {
  constructor() {
    super('handoff-cc-', { home: 'home', work: 'work' });
  }

  // `handoff setup claude-code ...` in this HOME.
  setup(...args) {
    const r = spawnSync(cliPath, ['setup', 'claude-code', '--artifact-dir', this.artifactDir, ...args],
      { env: { ...process.env, HOME: this.home }, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`setup failed (${r.status}): ${r.stderr}`);
    return r.stdout;
  }

  // Runs `claude -p` against the model; resolves to { code, stdout, stderr, result, ms }. A
  // variable `env` sets to null is left out of Claude Code's environment.
  async claude(modelUrl, { prompt = 'Go.', allowedTools = 'Agent,Bash', env = {}, timeoutMs = 240_000 } = {}) {
    const vars = {
      ...process.env, HOME: this.home, ANTHROPIC_BASE_URL: modelUrl, ANTHROPIC_API_KEY: 'test-key',
      DISABLE_TELEMETRY: '1', CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1', DISABLE_AUTOUPDATER: '1',
      HANDOFF_SOCKET: this.socket, ...env,
    };
    for (const [k, v] of Object.entries(vars)) if (v === null) delete vars[k];
    const run = await runProcess(claudePath, ['-p', prompt, '--output-format', 'json', '--allowedTools', allowedTools], {
      cwd: this.work,
      env: vars,
      timeoutMs,
    });
    let result;
    try { result = JSON.parse(run.stdout); } catch { result = undefined; }
    return { ...run, result };
  }
}

// The calls a footer names, in order: { tool: 'Read', offset, limit } or { tool: 'Bash', command }.
export function footerCalls(text) {
  const footer = text.slice(text.lastIndexOf('[Truncated: '));
  const calls = [];
  const re = /Read offset=(\d+) limit=(\d+)|Bash `([^`]+)`/g;
  for (const m of footer.matchAll(re)) {
    if (m[1]) calls.push({ tool: 'Read', offset: Number(m[1]), limit: Number(m[2]) });
    else calls.push({ tool: 'Bash', command: m[3] });
  }
  const pathMatch = footer.match(/Full text: (\S+\.txt) /) ?? footer.match(/'([^']+\.txt)'/);
  return { calls, artifact: pathMatch ? pathMatch[1] : undefined };
}

// The calls a `handoff read --plan` output lists, one a line (a `# more:` line is not a call).
export function planCalls(output) {
  const calls = [];
  for (const line of output.split('\n')) {
    let m = line.match(/^Read offset=(\d+) limit=(\d+)$/);
    if (m) calls.push({ tool: 'Read', offset: Number(m[1]), limit: Number(m[2]) });
    m = line.match(/^Bash `([^`]+)`$/);
    if (m) calls.push({ tool: 'Bash', command: m[1] });
  }
  return calls;
}

// The file's text as Claude Code's Read showed it: lines `N<TAB>text` numbered from `offset`.
export function readLines(output, offset, limit) {
  const lines = [];
  for (const line of output.split('\n')) {
    const m = line.match(/^\s*(\d+)\t(.*)$/s);
    if (m && Number(m[1]) === offset + lines.length && lines.length < limit) lines.push(m[2]);
  }
  return lines;
}

// Every call the footer of `copy` named (`seen.followCalls`, their results `seen.followResults`,
// in order) came back whole, none refused, and together they are the omitted lines of `answer`.
export function assertFollowed(seen, answer, copy) {
  const omitted = copy.match(/omitted lines (\d+)-(\d+) (?:in|back)/);
  assert.ok(omitted, `the footer names the omitted lines:\n${copy.slice(-800)}`);
  assert.ok(seen.followCalls.length > 0);
  assert.equal(seen.followResults?.length, seen.followCalls.length);
  const got = [];
  seen.followCalls.forEach((call, i) => {
    const r = seen.followResults[i];
    assert.equal(r.isError, false, `call ${i + 1} was refused: ${r.text.slice(0, 300)}`);
    assert.equal(call.tool, 'Read');
    const lines = readLines(r.text, call.offset, call.limit);
    assert.equal(lines.length, call.limit, `Read offset=${call.offset} limit=${call.limit} returned ${lines.length} lines`);
    got.push(...lines);
  });
  assert.deepEqual(got, answer.split('\n').slice(Number(omitted[1]) - 1, Number(omitted[2])));
}

// The parent's tool calls for footer calls `calls` (round `round` names their ids, which must be
// unique): Claude Code's Read on `artifact`, or its Bash.
export function followToolCalls(calls, artifact, round) {
  return calls.map((c, i) => ({
    id: `toolu_follow_${round}_${i}`,
    ...(c.tool === 'Read'
      ? { name: 'Read', input: { file_path: artifact, offset: c.offset, limit: c.limit } }
      : { name: 'Bash', input: { command: c.command, description: 'read omitted text back' } }),
  }));
}

// Tool results (by id, as toolResults() gives them) in the order of their calls' ids: they may
// come back in another order than the calls.
export function inCallOrder(results) {
  return [...results.keys()].sort((a, b) => Number(a.split('_').pop()) - Number(b.split('_').pop())).map((k) => results.get(k));
}
