// handoff's hooks in a real Gemini CLI 0.61.0 (`gemini -p`, headless) on a scripted Gemini API:
// what the parent model receives for its subagents' answers, and the footer's calls run through
// Gemini's own read_file.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

import { World, handoffdPath, longAnswer, readFileBody } from './harness.mjs';
import { daemonsServing, fallbackSocket } from '../support/world.mjs';
import { lastResponses, startScriptedGemini, toolNames } from './scripted-gemini.mjs';

// A parent that delegates `answers` (one invoke_agent call each, in one turn), then runs every
// footer call it got, then ends. Returns what it received.
async function delegate(world, answers, { followFooters = false, env = {} } = {}) {
  const received = { results: [], reads: [] };
  const api = await startScriptedGemini((req) => {
    if (toolNames(req).includes('complete_task')) {
      const m = JSON.stringify(req.contents).match(/CHILD-(\d+)/);
      return { calls: [{ name: 'complete_task', args: { result: answers[Number(m[1])] } }] };
    }
    const responses = lastResponses(req);
    if (responses.length === 0)
      return { calls: answers.map((_, i) => ({ name: 'invoke_agent', args: { agent_name: 'reporter', prompt: `Write report CHILD-${i}` } })) };
    if (responses[0].name === 'invoke_agent') {
      received.results = responses.map((r) => r.response.output);
      if (followFooters) {
        const calls = [];
        for (const text of received.results) {
          const file = text.match(/Full text: (\S+) —/)?.[1];
          for (const [, start, end] of text.matchAll(/read_file start_line=(\d+) end_line=(\d+)/g))
            calls.push({ name: 'read_file', args: { file_path: file, start_line: Number(start), end_line: Number(end) } });
        }
        if (calls.length > 0) return { calls };
      }
      return { text: 'done' };
    }
    received.reads = responses.map((r) => ({ name: r.name, output: r.response.output ?? r.response.error }));
    return { text: 'done' };
  });
  world.baseUrl = api.url;
  const run = await world.gemini('Delegate the reports.', env);
  await api.close();
  assert.equal(run.code, 0, run.stderr);
  return { ...received, stderr: run.stderr };
}

const frame = (text) => `Subagent 'reporter' finished.\nTermination Reason: GOAL\nResult:\n${text}`;

test('a 171,016-byte answer reaches the parent bounded: head, verdict, and footer calls read_file runs exactly', async () => {
  const world = new World();
  try {
    world.setup();
    await world.startDaemon();
    const answer = longAnswer(3001, 57);
    assert.equal(Buffer.byteLength(answer), 171016);
    const got = await delegate(world, [answer], { followFooters: true });
    assert.equal(got.results.length, 1);
    const text = got.results[0];
    console.log(`bounded: ${Buffer.byteLength(text)} bytes (Gemini CLI alone: ${Buffer.byteLength(frame(answer))})`);
    assert.ok(Buffer.byteLength(text) <= 16 * 1024, `${Buffer.byteLength(text)} bytes`);
    assert.ok(text.startsWith('finding 0001 '));
    assert.ok(text.includes('VERDICT: ship it'));
    const omitted = text.match(/omitted lines (\d+)-(\d+)/);
    assert.ok(omitted, text.slice(-600));
    assert.ok(got.reads.length >= 1);
    const lines = answer.split('\n');
    const back = got.reads.map((r) => readFileBody(r.output)).join('\n');
    assert.equal(back, lines.slice(Number(omitted[1]) - 1, Number(omitted[2])).join('\n'));
    assert.equal(world.artifacts().length, 1);
  } finally {
    await world.close();
  }
});

test('four children in one turn share one budget: within 48 KiB together, each with its verdict', async () => {
  const world = new World();
  try {
    world.setup();
    await world.startDaemon();
    const answers = [0, 1, 2, 3].map((i) => longAnswer(1001, 41, `c${i} `));
    const got = await delegate(world, answers);
    assert.equal(got.results.length, 4);
    const total = got.results.reduce((n, t) => n + Buffer.byteLength(t), 0);
    console.log(`four bounded: ${total} bytes (Gemini CLI alone: ${answers.reduce((n, a) => n + Buffer.byteLength(frame(a)), 0)})`);
    assert.ok(total <= 48 * 1024, `${total} bytes`);
    for (const t of got.results) {
      assert.match(t, /c\d VERDICT: ship it/);
      assert.ok(Buffer.byteLength(t) < 16 * 1024 - 1024, 'each got a share, not the lone cap');
    }
  } finally {
    await world.close();
  }
});

test('a short answer passes byte for byte, with no artifact', async () => {
  const world = new World();
  try {
    world.setup();
    await world.startDaemon();
    const answer = 'All good.\nVERDICT: fine';
    const got = await delegate(world, [answer]);
    assert.deepEqual(got.results, [frame(answer)]);
    assert.equal(world.artifacts().length, 0);
  } finally {
    await world.close();
  }
});

test('handoffd unavailable keeps head and verdict: the hook cuts the answer itself within 16 KiB, one line names the full copy, and read_file pages it exactly', async () => {
  const world = new World();
  try {
    world.setup();  // no daemon at the socket, none started (HANDOFF_AUTOSTART=0)
    const answer = longAnswer(3001, 57);
    const got = await delegate(world, [answer], { followFooters: true });
    assert.equal(got.results.length, 1);
    const text = got.results[0];
    console.log(`handoffd unavailable: ${Buffer.byteLength(text)} bytes (Gemini CLI alone: ${Buffer.byteLength(frame(answer))})`);
    assert.ok(Buffer.byteLength(text) <= 16 * 1024, `${Buffer.byteLength(text)} bytes`);
    assert.ok(text.startsWith('finding 0001 '));
    assert.ok(text.includes('VERDICT: ship it'));
    const lines = text.split('\n');
    const notes = lines.filter((l) => l.startsWith('[handoff:'));
    assert.equal(notes.length, 1, notes.join('\n'));
    const note = /^\[handoff: handoff's daemon was not reached \(.+\); the head and tail above were cut by the hook itself, the full text \(171,016 bytes\) is in (\S+)\]$/.exec(lines.at(-1));
    assert.ok(note, lines.at(-1));
    assert.equal(fs.readFileSync(note[1], 'utf8'), answer, 'the named file holds the full text byte for byte');
    assert.equal(fs.statSync(note[1]).mode & 0o777, 0o600);
    // Gemini's own read_file, run on the footer's calls, returns exactly the omitted lines.
    const omitted = text.match(/omitted lines (\d+)-(\d+)/);
    assert.ok(omitted, text.slice(-600));
    const back = got.reads.map((r) => readFileBody(r.output)).join('\n');
    assert.equal(back, answer.split('\n').slice(Number(omitted[1]) - 1, Number(omitted[2])).join('\n'));
    assert.equal(world.artifacts().length, 0, 'nothing in the store: handoffd owns it');
  } finally {
    await world.close();
  }
});

test('a shell with neither XDG_RUNTIME_DIR nor HANDOFF_SOCKET: the hook starts handoffd on the private fallback, ${TMPDIR}/handoff-UID/handoffd.sock, and the 171 KB answer is bounded', async () => {
  const world = new World();
  const tmp = path.join(world.dir, 'tmp');
  fs.mkdirSync(tmp, { mode: 0o1777 });
  const { socket, killDaemons } = fallbackSocket(tmp);
  try {
    world.setup();
    const answer = longAnswer(3001, 57);
    const got = await delegate(world, [answer], {
      env: { HANDOFF_SOCKET: undefined, XDG_RUNTIME_DIR: undefined, TMPDIR: tmp, HANDOFF_AUTOSTART: '1', HANDOFF_DAEMON: handoffdPath },
    });
    const text = got.results[0];
    assert.ok(Buffer.byteLength(text) <= 16 * 1024, `${Buffer.byteLength(text)} bytes`);
    assert.ok(text.startsWith('finding 0001 '));
    assert.ok(text.includes('VERDICT: ship it'));
    assert.match(text, /\[Truncated: 171,016 bytes/);
    assert.doesNotMatch(text, /daemon was not reached/);
    assert.equal(fs.statSync(path.dirname(socket)).mode & 0o777, 0o700, 'the fallback directory is private');
    assert.ok(daemonsServing(socket).length > 0, `a handoffd serves ${socket}`);
  } finally {
    killDaemons();
    await world.close();
  }
});
