// handoff's opencode plugin in Kilo Code CLI 7.7.9's terminal UI (`kilo`, no subcommand; an
// opencode fork), after `handoff setup kilo` at user level: under tmux, a prompt typed in, on the
// scripted Chat Completions model (tests/opencode/tui.mjs drives it as it drives opencode's).
// What the parent model receives for a task is what the scripted model records in its next
// request; the screen is compared with the same session's without handoff.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { test } from 'node:test';

import { World, cliPath, footer, longAnswer, script, taskFrame } from '../opencode/harness.mjs';
import { DONE, noiseIn, reportLines, screenLines, tuiTurn } from '../opencode/tui.mjs';
import { linesMissing } from '../support/tmux.mjs';
import { kiloEnv, kiloPath } from './harness.mjs';
import { startModel } from '../support/scripted-chat.mjs';

const KiB = 1024;
const bytes = (s) => Buffer.byteLength(s, 'utf8');
const answer = longAnswer(3001, 57);

// One Kilo TUI turn in a new world, the parent delegating the audit then saying DONE; with
// `handoff` (`handoff setup kilo` at user level, and handoffd) or without.
async function session(handoff) {
  const { respond, seen } = script([
    () => ({ calls: [{ name: 'task', arguments: { description: 'audit the parser', prompt: 'CHILD-LONG audit the parser', subagent_type: 'general' } }] }),
    () => ({ text: DONE }),
  ], { 'CHILD-LONG': answer });
  const world = new World({ binary: kiloPath, env: kiloEnv });
  const model = await startModel(respond);
  try {
    world.configure(model.baseUrl);
    if (handoff) {
      execFileSync(cliPath, ['setup', 'kilo', '--artifact-dir', world.artifactDir], { env: world.env(), encoding: 'utf8', timeout: 30_000 });
      await world.startDaemon();
    }
    const screen = await tuiTurn(world);
    assert.equal(seen.length, 1, 'the parent saw the task\'s result once');
    assert.equal(seen[0][0].name, 'task');
    return { screen, lines: screenLines(screen, world), result: seen[0][0].text, noise: noiseIn(screen, world), artifacts: world.artifacts().map((f) => fs.readFileSync(f, 'utf8')) };
  } finally {
    await model.close();
    await world.close();
  }
}

function assertTidy(s) {
  assert.match(s.screen, /┃ {2}PARENT delegate the audit/);
  assert.match(s.screen, /✓ General Task — audit the parser.*\n +↳ [\d.]+m?s/, s.screen);
  assert.match(s.screen, /The audit is done\./);
  assert.equal(s.noise, undefined, `"${s.noise}" on the screen:\n${s.screen}`);
  assert.deepEqual(reportLines(s.screen), [], 'none of the child\'s report on the screen');
}

test('Kilo\'s TUI after handoff setup kilo: the model gets the bounded result, and the screen is Kilo\'s own, line for line', async () => {
  const without = await session(false);
  assert.ok(bytes(without.result) > 40 * KiB, `${bytes(without.result)} bytes`);
  assert.doesNotMatch(without.result, /VERDICT: ship it/, 'the verdict is past Kilo\'s cut');
  assertTidy(without);

  const s = await session(true);
  const inner = taskFrame.exec(s.result)?.[1];
  assert.ok(inner !== undefined, `Kilo's frame kept: ${s.result.slice(0, 200)}`);
  assert.ok(bytes(s.result) <= 16 * KiB, `${bytes(s.result)} bytes`);
  assert.ok(inner.startsWith('finding 0001 '), 'the head');
  assert.match(inner, /VERDICT: ship it/, 'the verdict');
  const { full, reads } = footer(s.result);
  assert.ok(full && reads.length > 0, s.result.slice(-800));
  assert.deepEqual(s.artifacts, [answer], 'the store holds the exact answer');
  assertTidy(s);
  assert.doesNotMatch(s.screen, /\[handoff:/);

  const added = linesMissing(without.lines, s.lines);
  const dropped = linesMissing(s.lines, without.lines);
  console.log(`kilo TUI: screen lines only with handoff: ${JSON.stringify(added)}; only without: ${JSON.stringify(dropped)}`);
  assert.deepEqual(added, [], `lines Kilo alone does not draw:\n${s.screen}\n--- without handoff:\n${without.screen}`);
  assert.deepEqual(dropped, [], `lines Kilo alone draws that are gone:\n${s.screen}\n--- without handoff:\n${without.screen}`);
  console.log(`kilo TUI: the model got ${bytes(s.result)} bytes (${reads.length} read calls) with handoff, ${bytes(without.result)} without; the screen with handoff:\n${s.screen.split('\n').filter((l) => l.trim()).join('\n')}`);
});
