// handoff's opencode plugin inside a real Kilo Code CLI 7.7.9 (an opencode fork; this folder's pinned
// npm install), set up as its users would: `handoff setup kilo`, at user level, in
// ${XDG_CONFIG_HOME}/kilo/. Headless (`kilo run --format json`) on a scripted Chat Completions
// model: what the parent model receives for a task is what the model records in its next request.
// The world, the script and the footer helpers are opencode's suite's (tests/opencode/harness.mjs).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

import { World, assertPagesExact, cliPath, footer, longAnswer, script, taskFrame } from '../opencode/harness.mjs';
import { kiloEnv, kiloPath } from './harness.mjs';
import { startModel } from '../support/scripted-chat.mjs';

const KiB = 1024;
const bytes = (s) => Buffer.byteLength(s, 'utf8');
const task = (prompt, description = prompt.slice(0, 20)) => ({ name: 'task', arguments: { description, prompt, subagent_type: 'general' } });

// A Kilo world whose project config names the scripted model; `handoff setup kilo` at user level
// unless `setup` is false; handoffd started unless `daemon` is false.
async function kiloWorld(respond, { setup = true, daemon = true } = {}) {
  const world = new World({ binary: kiloPath, env: kiloEnv });
  const model = await startModel(respond);
  world.configure(model.baseUrl);
  if (setup) {
    const out = execFileSync(cliPath, ['setup', 'kilo', '--artifact-dir', world.artifactDir], { env: world.env(), encoding: 'utf8', timeout: 30_000 });
    assert.match(out, new RegExp(`setup kilo: wrote handoff's entries to ${world.config}/kilo/kilo.json`), out);
  }
  if (daemon) await world.startDaemon();
  return { world, model };
}

const theAudit = (answer) => script([
  () => ({ calls: [task('CHILD-LONG audit the parser', 'audit the parser')] }),
  ([bounded]) => {
    const full = /Full text: (\/\S+) — /.exec(bounded.text)?.[1];  // the store's copy, or Kilo's saved one
    return { calls: footer(bounded.text).reads.map((r) => ({ name: 'read', arguments: { filePath: full, offset: r.offset, limit: r.limit } })) };
  },
], { 'CHILD-LONG': answer });

test('without handoff, Kilo cuts a 171,016-byte task answer to its head: the verdict is lost (the baseline)', async () => {
  const answer = longAnswer(3001, 57);
  const { respond, seen } = script([() => ({ calls: [task('CHILD-LONG audit the parser', 'audit the parser')] })], { 'CHILD-LONG': answer });
  const { world, model } = await kiloWorld(respond, { setup: false, daemon: false });
  try {
    const run = await world.opencode('PARENT delegate the audit', { model });
    assert.equal(run.code, 0, run.stderr.slice(-2000));
    const [r] = seen[0];
    assert.ok(bytes(r.text) > 40 * KiB, `${bytes(r.text)} bytes`);
    assert.match(r.text, /finding 0001 /);
    assert.doesNotMatch(r.text, /VERDICT: ship it/, 'the verdict is past Kilo\'s cut');
    console.log(`kilo without handoff: a ${bytes(answer)}-byte answer reached the parent as ${bytes(r.text)} bytes, head only`);
  } finally {
    await model.close();
    await world.close();
  }
});

test('handoff setup kilo: the 171,016-byte answer reaches the parent bounded, head and verdict in, and the footer\'s reads return exactly the omitted lines', async () => {
  const answer = longAnswer(3001, 57);
  const { respond, seen } = theAudit(answer);
  const { world, model } = await kiloWorld(respond);
  try {
    assert.ok(!fs.existsSync(path.join(world.config, 'opencode')), 'nothing written in opencode\'s config');
    const run = await world.opencode('PARENT delegate the audit', { model });
    assert.equal(run.code, 0, run.stderr.slice(-2000));
    const [bounded] = seen[0];
    const inner = taskFrame.exec(bounded.text)?.[1];
    assert.ok(inner !== undefined, `Kilo's frame kept: ${bounded.text.slice(0, 200)}`);
    assert.ok(bytes(bounded.text) <= 16 * KiB, `${bytes(bounded.text)} bytes`);
    assert.ok(inner.startsWith('finding 0001 '), 'the head');
    assert.match(inner, /VERDICT: ship it/, 'the verdict');
    const { full } = footer(bounded.text);
    assert.ok(full?.startsWith(world.artifactDir), bounded.text.slice(-800));
    assert.equal(fs.readFileSync(full, 'utf8'), answer, 'the artifact is the exact answer');
    assert.equal(fs.statSync(full).mode & 0o777, 0o600);
    const calls = assertPagesExact(bounded.text, seen[1], answer);
    console.log(`kilo: a ${bytes(answer)}-byte answer reached the parent as ${bytes(bounded.text)} bytes; ${calls} read calls, exact`);
  } finally {
    await model.close();
    await world.close();
  }
});

test('handoff setup kilo: four children of one step share one budget, 48 KiB in all, each with its verdict', async () => {
  const answers = Object.fromEntries(['A', 'B', 'C', 'D'].map((t) => [`CHILD-${t}`, longAnswer(700, 57, `${t}-`)]));
  const { respond, seen } = script([() => ({ calls: Object.keys(answers).map((m) => task(`${m} review a part`)) })], answers);
  const { world, model } = await kiloWorld(respond);
  try {
    const run = await world.opencode('PARENT review four parts', { model });
    assert.equal(run.code, 0, run.stderr.slice(-2000));
    const results = seen[0];
    assert.equal(results.length, 4);
    const total = results.reduce((n, r) => n + bytes(r.text), 0);
    assert.ok(total <= 48 * KiB, `${total} bytes in all`);
    for (const [i, r] of results.entries()) {
      const tag = 'ABCD'[i];
      assert.match(r.text, taskFrame);
      assert.match(r.text, new RegExp(`${tag}-finding 0001`));
      assert.match(r.text, new RegExp(`${tag}-VERDICT: ship it`));
      assert.match(r.text, /Full text: \//);
    }
    console.log(`kilo: four answers reached the parent as ${total} bytes (${results.map((r) => bytes(r.text)).join(', ')})`);
  } finally {
    await model.close();
    await world.close();
  }
});

test('handoff setup kilo, handoffd unavailable: head and verdict cut by the hook from Kilo\'s saved copy, which one line names and the reads page exactly', async () => {
  const answer = longAnswer(3001, 57);
  const { respond, seen } = theAudit(answer);
  const { world, model } = await kiloWorld(respond, { daemon: false });
  try {
    const run = await world.opencode('PARENT delegate the audit', { model });
    assert.equal(run.code, 0, run.stderr.slice(-2000));
    const [r] = seen[0];
    assert.ok(bytes(r.text) <= 16 * KiB, `${bytes(r.text)} bytes`);
    assert.match(r.text, /<task_result>\nfinding 0001 /, 'the head');
    assert.match(r.text, /VERDICT: ship it/, 'the verdict');
    const last = r.text.split('\n').at(-1);
    const note = /^\[handoff: handoff's daemon was not reached \(.+\); the head and tail above were cut by the hook itself, the full text \([\d,]+ bytes\) is in (\/\S+)\]$/.exec(last);
    assert.ok(note, last);
    assert.match(note[1], /\/kilo\/tool-output\//, 'Kilo\'s own saved copy');
    const saved = fs.readFileSync(note[1], 'utf8');
    assert.equal(taskFrame.exec(saved)?.[1], answer, 'the named file holds the full text byte for byte');
    assert.deepEqual(world.artifacts(), [], 'nothing in the store: handoffd owns it');
    const calls = assertPagesExact(r.text, seen[1], saved);
    console.log(`kilo without handoffd: ${bytes(r.text)} bytes; ${calls} read calls of Kilo's saved copy, exact`);
  } finally {
    await model.close();
    await world.close();
  }
});
