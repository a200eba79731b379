// handoff's opencode plugin (`handoff setup opencode`) inside a real opencode 1.18.33, headless
// (`opencode run --format json`) on a scripted Chat Completions model: what the parent model
// receives for a task (a subagent) is what the scripted model records in its next request.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

import { World, assertPagesExact, cliPath, footer, handoffdPath, longAnswer, script, taskFrame } from './harness.mjs';
import { daemonsServing, fallbackSocket } from '../support/world.mjs';
import { startModel } from '../support/scripted-chat.mjs';

const KiB = 1024;
const bytes = (s) => Buffer.byteLength(s, 'utf8');
const task = (prompt, description = prompt.slice(0, 20)) => ({ name: 'task', arguments: { description, prompt, subagent_type: 'general' } });

async function opencodeWorld(respond, { setup = true, daemon = true } = {}) {
  const world = new World();
  const model = await startModel(respond);
  world.configure(model.baseUrl);
  if (setup) execFileSync(cliPath, ['setup', 'opencode', '--project', world.work, '--artifact-dir', world.artifactDir], { env: world.env(), encoding: 'utf8', timeout: 30_000 });
  if (daemon) await world.startDaemon();
  return { world, model };
}

test('a 171,016-byte answer reaches the parent bounded, head and verdict in, and every footer read returns exactly the omitted lines', async () => {
  const answer = longAnswer(3001, 57);
  assert.equal(bytes(answer), 171_016);
  const { respond, seen } = script([
    () => ({ calls: [task('CHILD-LONG audit the parser', 'audit the parser')] }),
    ([bounded]) => {
      const { full, reads } = footer(bounded.text);
      return { calls: reads.map((r) => ({ name: 'read', arguments: { filePath: full, offset: r.offset, limit: r.limit } })) };
    },
  ], { 'CHILD-LONG': answer });
  const { world, model } = await opencodeWorld(respond);
  try {
    const run = await world.opencode('PARENT delegate the audit', { model });
    assert.equal(run.code, 0, run.stderr.slice(-2000));
    const [bounded] = seen[0];
    assert.equal(bounded.name, 'task');
    const inner = taskFrame.exec(bounded.text)?.[1];
    assert.ok(inner !== undefined, `opencode's frame kept: ${bounded.text.slice(0, 200)}`);
    assert.ok(bytes(bounded.text) <= 16 * KiB, `${bytes(bounded.text)} bytes`);
    assert.ok(inner.startsWith('finding 0001 '), 'the head');
    assert.match(inner, /VERDICT: ship it/, 'the verdict');
    assert.doesNotMatch(bounded.text, /Full output saved to/, "not opencode's own cut");
    const { full, reads } = footer(bounded.text);
    assert.ok(full && reads.length > 0, bounded.text.slice(-800));
    assert.equal(fs.readFileSync(full, 'utf8'), answer, 'the artifact is the exact answer');
    assert.equal(fs.statSync(full).mode & 0o777, 0o600);
    // Every footer call, run by opencode's own read tool, gives back exactly its lines, and
    // together exactly the omitted ones.
    assertPagesExact(bounded.text, seen[1], answer);
    console.log(`opencode: a ${bytes(answer)}-byte answer reached the parent as ${bytes(bounded.text)} bytes; ${reads.length} read calls`);
  } finally {
    await model.close();
    await world.close();
  }
});

test('four children of one step share one budget: 48 KiB in all, each with its verdict', async () => {
  const answers = Object.fromEntries(['A', 'B', 'C', 'D'].map((t) => [`CHILD-${t}`, longAnswer(700, 57, `${t}-`)]));
  const { respond, seen } = script([
    () => ({ calls: Object.keys(answers).map((m) => task(`${m} review a part`)) }),
  ], answers);
  const { world, model } = await opencodeWorld(respond);
  try {
    const run = await world.opencode('PARENT review four parts', { model });
    assert.equal(run.code, 0, run.stderr.slice(-2000));
    const results = seen[0];
    assert.equal(results.length, 4);
    const total = results.reduce((n, r) => n + bytes(r.text), 0);
    const whole = Object.values(answers).reduce((n, a) => n + bytes(a), 0);
    assert.ok(total <= 48 * KiB, `${total} bytes in all`);
    for (const [i, r] of results.entries()) {
      const tag = 'ABCD'[i];
      assert.match(r.text, taskFrame);
      assert.match(r.text, new RegExp(`${tag}-finding 0001`));
      assert.match(r.text, new RegExp(`${tag}-VERDICT: ship it`));
      assert.match(r.text, /Full text: \//);
    }
    console.log(`opencode: four answers of ${whole} bytes reached the parent as ${total} bytes (${results.map((r) => bytes(r.text)).join(', ')})`);
  } finally {
    await model.close();
    await world.close();
  }
});

test('a short answer passes byte for byte, with nothing stored', async () => {
  const answer = 'The parser is fine.\n\nVERDICT: ship it';
  const { respond, seen } = script([() => ({ calls: [task('CHILD-SHORT check the parser')] })], { 'CHILD-SHORT': answer });
  const { world, model } = await opencodeWorld(respond);
  try {
    const run = await world.opencode('PARENT check', { model });
    assert.equal(run.code, 0, run.stderr.slice(-2000));
    const [r] = seen[0];
    assert.match(r.text, /^<task id="ses_[^"]+" state="completed">\n<task_result>\n/);
    assert.equal(taskFrame.exec(r.text)[1], answer);
    assert.deepEqual(world.artifacts(), []);
  } finally {
    await model.close();
    await world.close();
  }
});

test('handoffd unavailable keeps head and verdict: cut by the hook within 16 KiB from opencode\'s saved copy, which one line names and read pages exactly', async () => {
  const answer = longAnswer(3001, 57);
  const { respond, seen } = script([
    () => ({ calls: [task('CHILD-LONG audit')] }),
    ([bounded]) => {
      const full = /Full text: (\/\S+?) — /.exec(bounded.text)?.[1];
      const reads = [...bounded.text.matchAll(/read offset=(\d+) limit=(\d+)/g)];
      return { calls: reads.map((m) => ({ name: 'read', arguments: { filePath: full, offset: Number(m[1]), limit: Number(m[2]) } })) };
    },
  ], { 'CHILD-LONG': answer });
  const { world, model } = await opencodeWorld(respond, { daemon: false });
  try {
    const run = await world.opencode('PARENT audit', { model });
    assert.equal(run.code, 0, run.stderr.slice(-2000));
    const [r] = seen[0];
    assert.ok(r.text.startsWith('<task id="ses_'), r.text.slice(0, 100));
    assert.ok(bytes(r.text) <= 16 * KiB, `${bytes(r.text)} bytes`);
    assert.match(r.text, /<task_result>\nfinding 0001 /, 'the head');
    assert.match(r.text, /VERDICT: ship it/, 'the verdict');
    assert.doesNotMatch(r.text, /Full output saved to/, "not opencode's own head-only cut");
    const lines = r.text.split('\n');
    assert.equal(lines.filter((l) => l.startsWith('[handoff:')).length, 1);
    const note = /^\[handoff: handoff's daemon was not reached \(.+\); the head and tail above were cut by the hook itself, the full text \([\d,]+ bytes\) is in (\/\S+)\]$/.exec(lines.at(-1));
    assert.ok(note, lines.at(-1));
    // opencode's own saved copy: the whole output, the exact answer in its frame.
    const saved = fs.readFileSync(note[1], 'utf8');
    assert.equal(taskFrame.exec(saved)?.[1], answer, 'the named file holds the full text byte for byte');
    assert.match(note[1], /\/opencode\/tool-output\//);
    assert.deepEqual(world.artifacts(), [], 'nothing in the store: handoffd owns it');
    // Every footer call, run by opencode's own read, returns exactly the omitted lines of that file.
    assertPagesExact(r.text, seen[1], saved);
    console.log(`opencode without handoffd: ${bytes(r.text)} bytes (${lines.at(-1).slice(0, 120)}...)`);
  } finally {
    await model.close();
    await world.close();
  }
});

test('a shell with neither XDG_RUNTIME_DIR nor HANDOFF_SOCKET: the plugin\'s hook starts handoffd on the private fallback, ${TMPDIR}/handoff-UID/handoffd.sock, and the 171 KB answer is bounded', async () => {
  const answer = longAnswer(3001, 57);
  const { respond, seen } = script([
    () => ({ calls: [task('CHILD-FALLBACK audit the parser', 'audit the parser')] }),
  ], { 'CHILD-FALLBACK': answer });
  const { world, model } = await opencodeWorld(respond, { daemon: false });
  const { socket, killDaemons } = fallbackSocket(world.tmp);
  try {
    const run = await world.opencode('PARENT delegate the audit', {
      model, env: { HANDOFF_SOCKET: undefined, XDG_RUNTIME_DIR: undefined, HANDOFF_AUTOSTART: '1', HANDOFF_DAEMON: handoffdPath },
    });
    assert.equal(run.code, 0, run.stderr.slice(-2000));
    const [bounded] = seen[0];
    const inner = taskFrame.exec(bounded.text)?.[1];
    assert.ok(inner !== undefined, bounded.text.slice(0, 200));
    assert.ok(bytes(bounded.text) <= 16 * KiB, `${bytes(bounded.text)} bytes`);
    assert.ok(inner.startsWith('finding 0001 '), 'the head');
    assert.match(inner, /VERDICT: ship it/, 'the verdict');
    assert.match(inner, /\[Truncated: 171,016 bytes/);
    assert.doesNotMatch(inner, /daemon was not reached/);
    assert.equal(fs.statSync(path.dirname(socket)).mode & 0o777, 0o700, 'the fallback directory is private');
    assert.ok(daemonsServing(socket).length > 0, `a handoffd serves ${socket}`);
  } finally {
    killDaemons();
    await model.close();
    await world.close();
  }
});
