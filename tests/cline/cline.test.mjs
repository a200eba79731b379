// handoff's cline plugin (`handoff setup cline`) inside a real cline 3.0.65, headless (`cline
// --json PROMPT`, a session in cline's hub daemon, as its users run it) on a scripted Chat
// Completions model: what the parent model receives for a spawn_agent call (a subagent) is what the
// scripted model records in its next request. cline cuts every string of a tool result past 8,000
// characters in its middle; a page of the footer is read back through cline's own read_files.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

import { World, cliPath, clinePath, longAnswer } from './harness.mjs';
import { sleep, waitFor } from '../support/world.mjs';
import { parentScript, startModel } from '../support/scripted-chat.mjs';

const KiB = 1024;
const CUT = 8000;  // cline's CLINE_MESSAGE_BUILDER_MAX_TOOL_RESULT_CHARS default
const bytes = (s) => Buffer.byteLength(s, 'utf8');
const spawnAgent = (task) => ({ name: 'spawn_agent', arguments: { systemPrompt: 'You are a careful reviewer.', task } });

// The parent's script (../support/scripted-chat.mjs parentScript); `usage` is what every parent
// answer reports.
const script = (steps, answers, usage = undefined) => parentScript(steps, answers, { usage });

async function clineWorld(respond, { setup = true, daemon = true, env = {} } = {}) {
  const world = await World.create();
  const model = await startModel(respond);
  world.configure(model.baseUrl);
  if (setup) execFileSync(cliPath, ['setup', 'cline'], { env: world.env(env), encoding: 'utf8', timeout: 30_000 });
  if (daemon) await world.startDaemon();
  return { world, model };
}

// The footer of a bounded text: the full text's path, the omitted lines, and either the
// read_files pages it lists or the run_commands command (`handoff read --reader cline --plan`)
// that lists them when there are more than it has room for.
function footer(text) {
  const omitted = /omitted lines (\d+)-(\d+)/.exec(text);
  const plan = /run_commands `([^`]+ --plan \d+-\d+ '([^']+)')`/.exec(text);
  const full = plan?.[2] ?? /Full text: (\/\S+?\.txt)/.exec(text)?.[1];
  return { full, plan: plan?.[1], pages: pagesIn(text), omitted: omitted && { first: Number(omitted[1]), last: Number(omitted[2]) } };
}

const pagesIn = (text) => [...text.matchAll(/read_files start_line=(\d+) end_line=(\d+)/g)].map((m) => ({ start: Number(m[1]), end: Number(m[2]) }));
const readCalls = (full, pages) => pages.map((p) => ({ name: 'read_files', arguments: { files: [{ path: full, start_line: p.start, end_line: p.end }] } }));

// The parent's steps after its spawn_agent call: the footer's pages read with read_files, after
// running its plan command with run_commands when it has one. `follow.pages` keeps the pages asked
// for, `follow.planOutput` the plan command's output as cline showed it.
function follower() {
  const follow = { pages: [], full: undefined, planOutput: undefined };
  follow.steps = [
    ([bounded]) => {
      const f = footer(bounded.text);
      follow.full = f.full;
      if (f.plan) return { calls: [{ name: 'run_commands', arguments: { commands: [f.plan] } }] };
      follow.pages = f.pages;
      return { calls: readCalls(f.full, f.pages) };
    },
    ([listed]) => {
      if (listed?.name !== 'run_commands') return { text: 'done' };
      follow.planOutput = JSON.parse(listed.text)[0].result;
      follow.pages = pagesIn(follow.planOutput);
      return { calls: readCalls(follow.full, follow.pages) };
    },
  ];
  return follow;
}

// The lines a read_files result shows ("N | line", N padded), as { first, lines }; none of it cut.
function readLines(output) {
  const [entry] = JSON.parse(output);
  assert.equal(entry.success, true, output.slice(0, 300));
  assert.doesNotMatch(entry.result, /\.\.\.\[truncated \d+ chars\]\.\.\./, 'the page is under cline\'s cut');
  assert.ok(entry.result.length <= CUT, `${entry.result.length} characters`);
  const shown = entry.result.split('\n').map((l) => {
    const m = /^ *(\d+) \| ([\s\S]*)$/.exec(l);
    assert.ok(m, l.slice(0, 60));
    return { n: Number(m[1]), line: m[2] };
  });
  shown.forEach((s, i) => assert.equal(s.n, shown[0].n + i));
  return { first: shown[0].n, lines: shown.map((s) => s.line) };
}

// Every page, read by cline's own read_files, gives back exactly its lines of `full`, and together
// exactly the omitted ones.
function checkPages(outputs, pages, omitted, full) {
  const all = full.split('\n');
  assert.equal(outputs.length, pages.length);
  const got = [];
  outputs.forEach((o, i) => {
    assert.equal(o.name, 'read_files');
    const { first, lines } = readLines(o.text);
    assert.equal(first, pages[i].start);
    assert.deepEqual(lines, all.slice(pages[i].start - 1, pages[i].end));
    got.push(...lines);
  });
  assert.deepEqual(got, all.slice(omitted.first - 1, omitted.last));
}

test('cline alone cuts a 171,016-byte answer to its first and last 4,000 characters, nothing pointing to the middle', async () => {
  const answer = longAnswer(3001, 57);
  const { respond, seen } = script([() => ({ calls: [spawnAgent('CHILD-LONG audit the parser')] })], { 'CHILD-LONG': answer });
  const { world, model } = await clineWorld(respond, { setup: false, daemon: false });
  try {
    const run = await world.cline('PARENT delegate the audit', { model });
    assert.equal(run.code, 0, run.stderr.slice(-2000));
    const [r] = seen[0];
    assert.equal(r.name, 'spawn_agent');
    assert.ok(r.text.length <= CUT + 200, `${r.text.length} characters`);
    assert.match(r.text, /\.\.\.\[truncated \d+ chars\]\.\.\./);
    assert.doesNotMatch(r.text, /finding 1500 /, 'the middle is gone');
    console.log(`cline alone: a ${bytes(answer)}-byte answer reached the parent as ${r.text.length} characters: ${/\.\.\.\[truncated \d+ chars\]\.\.\./.exec(r.text)[0]}`);
  } finally {
    await model.close();
    await world.close();
  }
});

test('a 171,016-byte answer reaches the parent bounded under cline\'s cut, head and verdict in, and every footer page read by read_files returns exactly the omitted lines', async () => {
  const answer = longAnswer(3001, 57);
  assert.equal(bytes(answer), 171_016);
  const follow = follower();
  const { respond, seen } = script([() => ({ calls: [spawnAgent('CHILD-LONG audit the parser')] }), ...follow.steps], { 'CHILD-LONG': answer });
  const { world, model } = await clineWorld(respond);
  try {
    const run = await world.cline('PARENT delegate the audit', { model });
    assert.equal(run.code, 0, run.stderr.slice(-2000));
    const [bounded] = seen[0];
    assert.equal(bounded.name, 'spawn_agent');
    assert.ok(bytes(bounded.text) <= CUT, `${bytes(bounded.text)} bytes`);
    assert.doesNotMatch(bounded.text, /\.\.\.\[truncated \d+ chars\]/, "cline's own cut never lands in it");
    assert.ok(bounded.text.startsWith('finding 0001 '), bounded.text.slice(0, 100));
    assert.match(bounded.text, /VERDICT: ship it/, 'the verdict');
    const { full, omitted } = footer(bounded.text);
    assert.ok(full && omitted, bounded.text.slice(-800));
    assert.equal(fs.readFileSync(full, 'utf8'), answer, 'the artifact is the exact answer');
    assert.equal(fs.statSync(full).mode & 0o777, 0o600);
    assert.deepEqual(world.artifacts(), [full]);
    assert.ok(follow.pages.length > 0);
    if (follow.planOutput !== undefined) assert.ok(follow.planOutput.length <= CUT, `the plan, ${follow.planOutput.length} characters`);
    checkPages(seen.at(-1), follow.pages, omitted, answer);
    console.log(`cline: a ${bytes(answer)}-byte answer reached the parent as ${bytes(bounded.text)} bytes; ${follow.pages.length} read_files pages of lines ${omitted.first}-${omitted.last}${follow.planOutput !== undefined ? ', listed by the footer\'s run_commands plan' : ''}`);
  } finally {
    await model.close();
    await world.close();
  }
});

test('four children of one turn share one budget from the parent\'s context use, each with its head and verdict', async () => {
  const answers = Object.fromEntries(['A', 'B', 'C', 'D'].map((t) => [`CHILD-${t}`, longAnswer(700, 57, `${t}-`)]));
  // 192,000 of 200,000 tokens used: half the 8,000 left, at 4 bytes a token, is 16,000 bytes for
  // the four together; alone, each would get up to 8,000.
  const { respond, seen } = script([() => ({ calls: Object.keys(answers).map((m) => spawnAgent(`${m} review a part`)) })],
    answers, { prompt_tokens: 192_000, completion_tokens: 10 });
  const { world, model } = await clineWorld(respond, { env: { HANDOFF_CONTEXT_WINDOW: '200000' } });
  try {
    const run = await world.cline('PARENT review four parts', { model, env: { HANDOFF_CONTEXT_WINDOW: '200000' } });
    assert.equal(run.code, 0, run.stderr.slice(-2000));
    const results = seen[0];
    assert.equal(results.length, 4);
    const total = results.reduce((n, r) => n + bytes(r.text), 0);
    const whole = Object.values(answers).reduce((n, a) => n + bytes(a), 0);
    assert.ok(total <= 16_000 + 4 * 512, `${total} bytes in all`);
    for (const [i, r] of results.entries()) {
      const tag = 'ABCD'[i];
      assert.ok(bytes(r.text) <= CUT, `${bytes(r.text)} bytes`);
      assert.ok(r.text.startsWith(`${tag}-finding 0001`), r.text.slice(0, 80));
      assert.match(r.text, new RegExp(`${tag}-VERDICT: ship it`));
      assert.match(r.text, /Full text: \/|--plan \d+-\d+ '\//);
    }
    console.log(`cline: four answers of ${whole} bytes reached the parent as ${total} bytes (${results.map((r) => bytes(r.text)).join(', ')})`);
  } finally {
    await model.close();
    await world.close();
  }
});

test('answers that fit pass byte for byte with nothing stored: as cline made them, or the answer alone when cline\'s JSON of it would be over its cut', async () => {
  const answer = 'The parser is fine.\n\nVERDICT: ship it';
  // 7,912 bytes: under the cut, but its JSON text (each "\n" escaped) is over it.
  const escaped = `${'y'.repeat(40)}\n`.repeat(192) + 'VERDICT: ship it too, ' + 'z'.repeat(18);
  assert.ok(escaped.length <= CUT && JSON.stringify({ text: escaped }).length > CUT);
  const { respond, seen } = script([() => ({ calls: [spawnAgent('CHILD-SHORT check the parser'), spawnAgent('CHILD-ESCAPED check the lexer')] })],
    { 'CHILD-SHORT': answer, 'CHILD-ESCAPED': escaped });
  const { world, model } = await clineWorld(respond);
  try {
    const run = await world.cline('PARENT check', { model });
    assert.equal(run.code, 0, run.stderr.slice(-2000));
    const [short, long] = seen[0];
    const result = JSON.parse(short.text);
    assert.equal(result.text, answer);
    assert.equal(result.finishReason, 'completed');
    assert.equal(long.text, escaped);
    assert.deepEqual(world.artifacts(), []);
  } finally {
    await model.close();
    await world.close();
  }
});

test('handoffd unavailable keeps head and verdict: cut by the hook under cline\'s cut, one line naming a private copy whose read_files pages are exactly the omitted lines', async () => {
  const answer = longAnswer(3001, 57);
  const follow = follower();
  const { respond, seen } = script([() => ({ calls: [spawnAgent('CHILD-LONG audit')] }), ...follow.steps], { 'CHILD-LONG': answer });
  const { world, model } = await clineWorld(respond, { daemon: false });
  try {
    const run = await world.cline('PARENT audit', { model });
    assert.equal(run.code, 0, run.stderr.slice(-2000));
    const [r] = seen[0];
    assert.ok(bytes(r.text) <= CUT, `${bytes(r.text)} bytes`);
    assert.ok(r.text.startsWith('finding 0001 '), r.text.slice(0, 100));
    assert.match(r.text, /VERDICT: ship it/, 'the verdict');
    assert.doesNotMatch(r.text, /\.\.\.\[truncated \d+ chars\]/);
    const lines = r.text.split('\n');
    assert.equal(lines.filter((l) => l.startsWith('[handoff:')).length, 1);
    const note = /^\[handoff: handoff's daemon was not reached \(.+\); the head and tail above were cut by the hook itself, the full text \([\d,]+ bytes\) is in (\/\S+)\]$/.exec(lines.at(-1));
    assert.ok(note, lines.at(-1));
    assert.equal(path.dirname(note[1]), path.join(world.cache, 'handoff', 'unbounded'));
    assert.equal(fs.readFileSync(note[1], 'utf8'), answer, 'the named file holds the full text byte for byte');
    assert.equal(fs.statSync(note[1]).mode & 0o777, 0o600);
    assert.deepEqual(world.artifacts(), [], 'nothing in the store: handoffd owns it');
    const { full, omitted } = footer(r.text);
    assert.equal(full, note[1]);
    assert.ok(follow.pages.length > 0);
    checkPages(seen.at(-1), follow.pages, omitted, answer);
    console.log(`cline without handoffd: ${bytes(r.text)} bytes (${lines.at(-1).slice(0, 100)}...)`);
  } finally {
    await model.close();
    await world.close();
  }
});

test('in cline\'s terminal UI (under tmux) the same plugin bounds the answer the parent model reads; the screen is cline\'s own', async () => {
  const answer = longAnswer(3001, 57);
  const { respond, seen } = script([() => ({ calls: [spawnAgent('CHILD-LONG audit the parser')] })], { 'CHILD-LONG': answer });
  const { world, model } = await clineWorld(respond);
  const server = `handoff-cline-${process.pid}`;
  const tmux = (...args) => spawnSync('tmux', ['-L', server, ...args], { encoding: 'utf8' });
  const screen = () => tmux('capture-pane', '-p', '-t', 'ui').stdout ?? '';
  const env = Object.entries(world.env({ TERM: 'xterm-256color', CLINE_DISABLE_CLINE_PASS_NOTICE: '1' })).map(([k, v]) => `${k}=${v}`);
  let pane;
  try {
    assert.equal(tmux('new-session', '-d', '-s', 'ui', '-x', '160', '-y', '50', '-c', world.work, 'env', '-i', ...env, clinePath, '--tui').status, 0);
    pane = Number(tmux('display-message', '-p', '-t', 'ui', '#{pane_pid}').stdout);
    await waitFor('the terminal UI', () => screen().includes('Auto-approve'), { timeoutMs: 60_000, intervalMs: 200, detail: screen });
    tmux('send-keys', '-t', 'ui', 'Escape');  // any notice cline shows first
    await sleep(300);  // keystrokes a TUI reads one read at a time
    tmux('send-keys', '-t', 'ui', '-l', 'PARENT delegate the audit');
    await sleep(300);
    tmux('send-keys', '-t', 'ui', 'Enter');
    await waitFor('the parent\'s next request', () => seen.length > 0, { timeoutMs: 90_000, intervalMs: 200, detail: screen });
    const [r] = seen[0];
    assert.equal(r.name, 'spawn_agent');
    assert.ok(bytes(r.text) <= CUT, `${bytes(r.text)} bytes`);
    assert.ok(r.text.startsWith('finding 0001 '));
    assert.match(r.text, /VERDICT: ship it/);
    assert.doesNotMatch(r.text, /\.\.\.\[truncated \d+ chars\]/);
    assert.match(r.text, /--plan \d+-\d+ '\/|read_files start_line=/);
    await waitFor('the turn drawn', () => screen().includes('done'), { timeoutMs: 30_000, intervalMs: 200, detail: screen });
    assert.doesNotMatch(screen(), /handoff/i, 'nothing of handoff on the screen');
    console.log(`cline TUI: a ${bytes(answer)}-byte answer reached the parent as ${bytes(r.text)} bytes`);
  } finally {
    tmux('kill-server');
    if (pane) await waitFor('the terminal UI to exit', () => !fs.existsSync(`/proc/${pane}`), { timeoutMs: 10_000 }).catch(() => {});
    await model.close();
    await world.close();
  }
});

test('setup writes the plugin cline loads, idempotent, and --remove takes exactly it out', async () => {
  const world = await World.create();
  try {
    const env = world.env();
    const plugin = path.join(world.clineDir, 'plugins', 'handoff.js');
    const mine = path.join(world.clineDir, 'plugins', 'mine.js');
    fs.mkdirSync(path.dirname(mine), { recursive: true });
    fs.writeFileSync(mine, 'export default { name: "mine", manifest: { capabilities: ["hooks"] }, hooks: {} };\n');
    const setup = (...args) => execFileSync(cliPath, ['setup', 'cline', ...args], { env, encoding: 'utf8', timeout: 30_000 });
    assert.match(setup('--dry-run'), /handoff's cline plugin/);
    assert.equal(fs.existsSync(plugin), false, '--dry-run writes nothing');
    setup();
    const written = fs.readFileSync(plugin, 'utf8');
    assert.ok(written.startsWith("// handoff's cline plugin"));
    assert.ok(written.includes(JSON.stringify(fs.realpathSync(cliPath))), 'it runs this handoff');
    setup();
    assert.equal(fs.readFileSync(plugin, 'utf8'), written, 'a second setup changes nothing');
    setup('--remove');
    assert.equal(fs.existsSync(plugin), false);
    assert.ok(fs.existsSync(mine), "another plugin stays");
    fs.writeFileSync(plugin, '// a plugin of the user\'s that happens to be named so\n');
    assert.throws(() => setup(), /not handoff's plugin/);
    assert.throws(() => setup('--remove'), /not handoff's plugin/);
    assert.equal(fs.readFileSync(plugin, 'utf8'), '// a plugin of the user\'s that happens to be named so\n');
  } finally {
    await world.close();
  }
});
