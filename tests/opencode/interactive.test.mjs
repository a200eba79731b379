// handoff's opencode plugin in opencode 1.18.33's terminal UI (`opencode`, no subcommand), as most
// of its users run it: under tmux (./tui.mjs), a prompt typed in, on the scripted Chat Completions
// model. What the parent model receives for a task is what the scripted model records in its next
// request; what the user sees is the screen once the turn has ended, compared with the same
// session's screen without handoff. Last, the parent follows the footer's reads there.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { test } from 'node:test';

import { World, cliPath, footer, longAnswer, readLines, script, taskFrame } from './harness.mjs';
import { DONE, noiseIn, reportLines, screenLines, tuiTurn } from './tui.mjs';
import { linesMissing } from '../support/tmux.mjs';
import { startModel } from '../support/scripted-chat.mjs';

const KiB = 1024;
const bytes = (s) => Buffer.byteLength(s, 'utf8');
const answer = longAnswer(3001, 57);
// The parent delegates the audit, then ends the turn with DONE.
// With `follow`, it first makes the footer's read calls, with opencode's own read.
const theAudit = ({ follow = false } = {}) => script([
  () => ({ calls: [{ name: 'task', arguments: { description: 'audit the parser', prompt: 'CHILD-LONG audit the parser', subagent_type: 'general' } }] }),
  ...(follow ? [([bounded]) => {
    const { full, reads } = footer(bounded.text);
    return { calls: reads.map((r) => ({ name: 'read', arguments: { filePath: full, offset: r.offset, limit: r.limit } })) };
  }] : []),
  () => ({ text: DONE }),
], { 'CHILD-LONG': answer });

// One TUI turn in a new world: `handoff setup opencode --project` when `setup`, handoffd when
// `daemon`. Resolves to { screen, lines, result }: the screen, its lines for comparing, and the
// task result the parent's next request held.
async function session({ setup, daemon, follow = false }) {
  const { respond, seen } = theAudit({ follow });
  const world = new World();
  const model = await startModel(respond);
  try {
    world.configure(model.baseUrl);
    if (setup) execFileSync(cliPath, ['setup', 'opencode', '--project', world.work, '--artifact-dir', world.artifactDir], { env: world.env(), encoding: 'utf8', timeout: 30_000 });
    if (daemon) await world.startDaemon();
    const screen = await tuiTurn(world);
    assert.equal(seen.length, follow ? 2 : 1, 'the parent saw the task\'s result once');
    const [result] = seen[0];
    assert.equal(result.name, 'task');
    return { screen, lines: screenLines(screen, world), result: result.text, pages: seen[1], readPaths: screen.split(`→ Read ${world.artifactDir}/`).length - 1, noise: noiseIn(screen, world), artifacts: world.artifacts().map((f) => fs.readFileSync(f, 'utf8')) };
  } finally {
    await model.close();
    await world.close();
  }
}

// opencode alone, once for the file: the screen the others are compared with.
let baselineRun;
const baseline = () => (baselineRun ??= session({ setup: false, daemon: false }));

// The with-handoff screen against the baseline: the lines it has that the baseline lacks (none
// expected: opencode draws a task as its title and duration, never its output), printed both ways.
function compareScreens(name, withHandoff, without) {
  const added = linesMissing(without.lines, withHandoff.lines);
  const dropped = linesMissing(withHandoff.lines, without.lines);
  console.log(`${name}: screen lines only with handoff: ${JSON.stringify(added)}; only without: ${JSON.stringify(dropped)}`);
  assert.deepEqual(added, [], `lines opencode alone does not draw:\n${withHandoff.screen}\n--- without handoff:\n${without.screen}`);
  assert.deepEqual(dropped, [], `lines opencode alone draws that are gone:\n${withHandoff.screen}\n--- without handoff:\n${without.screen}`);
}

// What every screen of this turn shows: the prompt, the task's line, the final text; none of the
// child's report, nothing of handoff's.
function assertTidy(s) {
  assert.match(s.screen, /┃ {2}PARENT delegate the audit/);
  assert.match(s.screen, /✓ General Task — audit the parser.*\n +↳ [\d.]+m?s/, s.screen);
  assert.match(s.screen, /The audit is done\./);
  assert.equal(s.noise, undefined, `"${s.noise}" on the screen:\n${s.screen}`);
}

test('without handoff (the baseline): the TUI draws the task as one title line and its duration; the model gets opencode\'s 51 KB cut, the verdict lost', async () => {
  const s = await baseline();
  assert.ok(bytes(s.result) > 40 * KiB, `${bytes(s.result)} bytes`);
  assert.match(s.result, /finding 0001 /);
  assert.doesNotMatch(s.result, /VERDICT: ship it/, 'the verdict is past opencode\'s cut');
  assertTidy(s);
  assert.deepEqual(reportLines(s.screen), []);
  console.log(`opencode TUI without handoff: the model got ${bytes(s.result)} bytes; the screen:\n${s.screen.split('\n').filter((l) => l.trim()).join('\n')}`);
});

test('handoff setup opencode --project and handoffd: the model gets the bounded result, and the screen is opencode\'s own, line for line', async () => {
  const s = await session({ setup: true, daemon: true });
  const inner = taskFrame.exec(s.result)?.[1];
  assert.ok(inner !== undefined, `opencode's frame kept: ${s.result.slice(0, 200)}`);
  assert.ok(bytes(s.result) <= 16 * KiB, `${bytes(s.result)} bytes`);
  assert.ok(inner.startsWith('finding 0001 '), 'the head');
  assert.match(inner, /VERDICT: ship it/, 'the verdict');
  assert.match(inner, /\[Truncated: 171,016 bytes/);
  const { full, reads } = footer(s.result);
  assert.ok(full && reads.length > 0, s.result.slice(-800));
  assert.deepEqual(s.artifacts, [answer], 'the store holds the exact answer');
  assertTidy(s);
  assert.doesNotMatch(s.screen, /^.*\[handoff:/m);
  const without = await baseline();
  assert.ok(reportLines(s.screen).length <= reportLines(without.screen).length, reportLines(s.screen).join('\n'));
  compareScreens('opencode TUI', s, without);
  console.log(`opencode TUI with handoff: the model got ${bytes(s.result)} bytes (${reads.length} read calls) for the ${bytes(answer)}-byte answer, ${bytes(without.result)} without`);
});

test('handoffd unavailable: the model gets head, verdict and the one [handoff: ...] line, and the screen is still opencode\'s own', async () => {
  const s = await session({ setup: true, daemon: false });
  assert.ok(bytes(s.result) <= 16 * KiB, `${bytes(s.result)} bytes`);
  assert.match(s.result, /<task_result>\nfinding 0001 /, 'the head');
  assert.match(s.result, /VERDICT: ship it/, 'the verdict');
  const notes = s.result.split('\n').filter((l) => l.startsWith('[handoff:'));
  assert.equal(notes.length, 1, notes.join('\n'));
  assert.match(notes[0], /^\[handoff: handoff's daemon was not reached \(.+\); the head and tail above were cut by the hook itself, the full text \(171,\d{3} bytes\) is in \/\S+\]$/);
  assert.equal(s.result.split('\n').at(-1), notes[0], 'the last line');
  assert.deepEqual(s.artifacts, [], 'nothing in the store');
  assertTidy(s);
  assert.doesNotMatch(s.screen, /daemon was not reached|\[handoff:/);
  const without = await baseline();
  assert.ok(reportLines(s.screen).length <= reportLines(without.screen).length, reportLines(s.screen).join('\n'));
  compareScreens('opencode TUI, handoffd down', s, without);
  console.log(`opencode TUI without handoffd: the model got ${bytes(s.result)} bytes, ending "${notes[0].slice(0, 90)}..."`);
});

test('the footer\'s read calls, made in the TUI with opencode\'s default permissions, run without a prompt and return exactly the omitted lines', async () => {
  const s = await session({ setup: true, daemon: true, follow: true });
  const { reads } = footer(s.result);
  assert.equal(s.pages.length, reads.length);
  const got = s.pages.flatMap((p, i) => {
    assert.equal(p.name, 'read');
    const { first, lines } = readLines(p.text);
    assert.equal(first, reads[i].offset);
    return lines;
  });
  const omitted = /omitted lines (\d+)-(\d+)/.exec(s.result);
  assert.deepEqual(got, answer.split('\n').slice(Number(omitted[1]) - 1, Number(omitted[2])));
  assertTidy(s);
  assert.deepEqual(reportLines(s.screen), [], 'read draws its call, not the lines it read');
  // Each read is one call line, "→ Read PATH [offset=N, limit=M]" (the path wrapped at the
  // column's width), the store's file; no permission prompt was drawn or needed.
  assert.equal(s.screen.split('→ Read ').length - 1, reads.length, s.screen);
  assert.equal(s.readPaths, reads.length, s.screen);
  assert.deepEqual([...s.screen.matchAll(/\[offset=(\d+), limit=(\d+)\]/g)].map((m) => ({ offset: Number(m[1]), limit: Number(m[2]) })), reads);
  assert.doesNotMatch(s.screen, /[Pp]ermission|Allow|[Rr]eject/);
  console.log(`opencode TUI, the footer followed: the screen:\n${s.screen.split('\n').filter((l) => l.trim()).join('\n')}`);
});
