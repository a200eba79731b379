// handoff's subagentStop hook in the real GitHub Copilot CLI 1.0.102 as people run it: its
// terminal UI (`copilot`, no -p) under tmux (a private server per test), typed into with
// send-keys and read with capture-pane, on the scripted model. The screen must stay as tidy as
// Copilot's own: the task's one line, no hook output, no error.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { test } from 'node:test';

import { World, cliPath, copilotPath, longAnswer } from './harness.mjs';
import { assistantTurns, lastToolResults, promptHas, startModel } from '../support/scripted-chat.mjs';
import { TmuxSession } from '../support/tmux.mjs';
import { sleep } from '../support/world.mjs';

const bytes = (s) => Buffer.byteLength(s, 'utf8');

// `copilot` under tmux in `world`, on `model`; `screen()` is the scrollback as the user sees it.
const copilotTui = (world, model) => new TmuxSession({ dir: world.dir, argv: [copilotPath], cwd: world.work, env: world.env(model) });

// One interactive session: the parent delegates CHILD-LONG, then answers `reply`. Resolves to
// { screen, seen }: the scrollback once the reply is drawn, and the task result the model got.
async function session(world, model, seen) {
  const tui = copilotTui(world, model);
  try {
    await tui.waitFor(/Do you trust the files in this folder\?/);
    tui.key('Enter');  // 1. Yes (this session)
    await tui.waitFor(/Interactive/);
    tui.type('PARENT delegate the audit');
    await sleep(300);  // the input box takes the paste before Enter
    tui.key('Enter');
    const screen = await tui.waitFor(/The audit is done/, 90_000);
    return { screen, seen };
  } finally {
    await tui.close();
  }
}

function script(answer) {
  const seen = [];
  const respond = (request) => {
    if (promptHas(request, 'CHILD-LONG ')) return { text: answer };
    if (!promptHas(request, 'PARENT')) return { text: 'ok' };
    const turn = assistantTurns(request);
    if (turn === 0) return { calls: [{ name: 'task', arguments: { description: 'audit the parser', prompt: 'CHILD-LONG audit', agent_type: 'general-purpose', name: 'auditor' } }] };
    seen.push(...lastToolResults(request));
    // With handoff, the footer's first page, read by Copilot's view in the UI's default mode.
    const full = /Full text: (\/\S+?\.txt)/.exec(seen[0].text)?.[1];
    const page = /view view_range=\[(\d+),(\d+)\]/.exec(seen[0].text);
    if (turn === 1 && full && page) return { calls: [{ name: 'view', arguments: { path: full, view_range: [Number(page[1]), Number(page[2])] } }] };
    return { text: 'The audit is done.' };
  };
  return { respond, seen };
}

test('in the terminal UI the task line shows the bounded answer\'s first line, as tidy as Copilot\'s own, and the model gets head, verdict and footer', async () => {
  const answer = longAnswer(3001, 57);
  const without = script(answer);
  const withHandoff = script(answer);
  const world = new World();
  const plain = await startModel(without.respond);
  const bounded = await startModel(withHandoff.respond);
  try {
    await world.startDaemon();
    const before = await session(world, plain, without.seen);
    execFileSync(cliPath, ['setup', 'copilot', '--artifact-dir', world.artifactDir], { env: world.env(), encoding: 'utf8', timeout: 30_000 });
    const after = await session(world, bounded, withHandoff.seen);

    // The model: Copilot's preview without handoff, the bounded answer with it.
    assert.match(before.seen[0].text, /^Output too large to read at once/);
    const got = after.seen[0].text;
    assert.ok(bytes(got) <= 16 * 1024, `${bytes(got)} bytes`);
    assert.ok(got.startsWith('finding 0001 '));
    assert.match(got, /VERDICT: ship it/);
    assert.match(got, /view view_range=\[\d+,\d+\]/);
    // Its first page, read by view in the UI's default (manual approval) mode without a prompt
    // (handoff's preToolUse hook allows the store): exactly the lines it names.
    const [first, last] = /view view_range=\[(\d+),(\d+)\]/.exec(got).slice(1).map(Number);
    assert.equal(withHandoff.seen[1]?.name, 'view');
    assert.deepEqual(withHandoff.seen[1].text.split('\n'), answer.split('\n').slice(first - 1, last));

    // The screen, from the prompt to the reply: the task's line and its one result line (its
    // first line); nothing of handoff's besides, no hook error, no more lines than Copilot's own.
    const turn = (s) => s.slice(s.lastIndexOf('PARENT delegate the audit'), s.lastIndexOf('The audit is done'));
    assert.match(turn(before.screen), /└ Output too large to read at once \(167\.0 KB\)/);
    const taskLine = /└ (.*)$/m.exec(turn(after.screen))?.[1] ?? '';
    assert.ok(taskLine.startsWith('finding 0001 '), after.screen);
    assert.doesNotMatch(turn(after.screen), /handoff|[Hh]ook|[Ee]rror|VERDICT|Truncated/, after.screen);
    // Up to the task's result line, as many lines as Copilot's own (its notice of its MCP servers
    // lands before or after the prompt, as its loading goes).
    const task = (s) => { const t = turn(s); return t.slice(0, t.indexOf('\n', t.indexOf('└'))); };
    const lines = (s) => task(s).split('\n').filter((l) => l.trim() !== '' && !/MCP Servers reloaded/.test(l)).length;
    assert.equal(lines(after.screen), lines(before.screen), `${task(before.screen)}\n---\n${task(after.screen)}`);
    // The page read shows as Copilot's own read line, with no prompt for the path.
    assert.match(turn(after.screen), /● Read [0-9a-f]{64}\.txt L\d+:\d+ \(\d+ lines read\)/);
    assert.doesNotMatch(after.screen, /Allow path access/);
    console.log(`copilot TUI: task line without handoff "${/└ (.*)/.exec(turn(before.screen))[1].slice(0, 60)}", with it "${taskLine.slice(0, 60)}"; the model got ${bytes(before.seen[0].text)} -> ${bytes(got)} bytes`);
  } finally {
    await plain.close();
    await bounded.close();
    await world.close();
  }
});
