// handoff inside the interactive Claude Code 2.1.332 (and 2.1.328), as people run it: `claude` in a terminal
// (tmux), a user typing, every Agent call a background agent. `handoff setup claude-code`, then
// a scripted model whose parent delegates; the child's report reaches the parent as Claude
// Code's notice, which handoff's UserPromptSubmit gate blocks once its bounded copy is spooled,
// and its asyncRewake deliverer hands that copy to the model.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

import { World, handoffdPath, longAnswer, footerCalls, planCalls, assertFollowed, followToolCalls, inCallOrder } from './harness.mjs';
import { daemonsServing, fallbackSocket } from '../support/world.mjs';
import { startModel, firstUserText, newestTurn, contentText, toolResults } from './scripted-anthropic.mjs';
import { Tui } from './tui.mjs';

const KiB = 1024;
const bytes = (s) => Buffer.byteLength(s, 'utf8');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const rewakeMark = "A background agent's report, bounded by handoff";

// The text of every message of a request, one string.
const requestText = (req) => (req.messages ?? []).map((m) => contentText(m.content)).join('\n');
const turnText = (req) => newestTurn(req).map((m) => contentText(m.content)).join('\n');

// A parent that, when the user types "delegate", launches one background agent per prompt in
// `agents` (or, for `{ skill }`, calls that skill); children answer by their prompt's key in `answers` (in auto mode through
// SubagentHandback, as Claude Code tells them to). With `follow`, the parent makes every call the
// footer of a bounded copy names, through Claude Code's own Read and Bash.
function script({ agents, answers, follow = false, childDelayMs = 0 }) {
  const seen = { parentRequests: [], bounded: [], followCalls: [], followResults: undefined, artifact: undefined, typed: [], childAsked: false };
  let round = 0;
  const respond = async (req) => {
    const first = firstUserText(req);
    for (const [key, answer] of Object.entries(answers)) {
      if (!first.includes(key)) continue;
      if (req.tools?.some((t) => t.name === 'SubagentHandback')) {
        if (toolResults(req).size > 0) return { text: 'handed back' };
        seen.childAsked = true;
        if (childDelayMs) await sleep(childDelayMs);  // a slow child on purpose
        return { tools: [{ name: 'SubagentHandback', input: { message: answer } }] };
      }
      seen.childAsked = true;
      if (childDelayMs) await sleep(childDelayMs);  // a slow child on purpose
      return { text: answer };
    }
    if (!req.tools?.length) return { text: 'ok' };  // Claude Code's own side requests
    if (/You are a security monitor/.test(JSON.stringify(req.system ?? ''))) return { text: '<severity>5' };
    seen.parentRequests.push(req);
    const turn = turnText(req);
    for (const line of turn.split('\n')) if (line.startsWith('typed:')) seen.typed.push(line);
    if (turn.includes('delegate')) {
      return {
        tools: agents.map((prompt, i) => (typeof prompt === 'object'
          ? { name: 'Skill', input: { skill: prompt.skill } }  // a skill the test wrote
          : { name: 'Agent', input: { description: `audit ${i + 1}`, prompt, subagent_type: 'general-purpose' } })),
      };
    }
    const results = toolResults(req);
    if (seen.followCalls.length > 0 && results.size > 0 && !seen.followResults) {
      seen.followResults = inCallOrder(results);
      if (seen.planCommand && seen.followCalls.length === 1) {
        seen.planOutput = seen.followResults[0].text;
        seen.followCalls = planCalls(seen.planOutput);
        seen.followResults = undefined;
        return { tools: toolCalls(seen.followCalls) };
      }
      return { text: 'read it all' };
    }
    if (turn.includes(rewakeMark)) {
      const copy = turn.slice(turn.indexOf(rewakeMark));
      seen.bounded.push(copy);
      if (follow && seen.followCalls.length === 0 && copy.includes('[Truncated: ')) {
        const { calls, artifact } = footerCalls(copy);
        seen.artifact = artifact;
        if (calls.length === 1 && calls[0].tool === 'Bash' && calls[0].command.includes(' --plan ')) seen.planCommand = calls[0].command;
        seen.followCalls = calls;
        return { tools: toolCalls(calls) };
      }
    }
    return { text: 'noted.' };
  };
  const toolCalls = (calls) => followToolCalls(calls, seen.artifact, ++round);
  return { respond, seen };
}

// Runs one interactive session: `claude` in `mode`, the user types "delegate", then waits until
// `done(seen)` holds (or fails after `timeoutMs`). Returns { seen, screen, model }.
async function session(world, respond, seen, { mode = 'acceptEdits', review = 'server', done, timeoutMs = 120_000, during, after, env = {} } = {}) {
  const model = await startModel(respond, { review });
  const tui = new Tui(world, model.url, { mode, env });
  try {
    await tui.waitFor(/❯/);
    await tui.type('delegate the audit');
    if (during) await during(tui);
    await until(tui, world, () => done(seen), timeoutMs);
    await sleep(1500);  // a window for what must not come (a second copy, the notice itself)
    const screen = tui.screen();
    const afterwards = after ? await after(tui) : undefined;
    return { screen, afterwards, printed: tui.printed(), requests: model.requests };
  } finally {
    await tui.close();
    await model.close();
  }
}

// Waits for `cond`, answering Claude Code's prompts as a user who approves them would (the
// footer's Bash command asks in default and acceptEdits modes, and every action in auto mode once
// it has fallen back to its local check).
async function until(tui, world, cond, timeoutMs) {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    const screen = tui.screen();
    if (Date.now() > end) throw new Error(`timed out; screen:\n${screen}\nlog:\n${world.log().slice(-3000)}`);
    if (/Do you want to proceed\?/.test(screen) && /❯ 1\. Yes/.test(screen)) tui.keys('Enter');
    if (/Do you want to proceed\?/.test(screen) && /❯ No\s*\n\s*Yes/.test(screen)) {
      tui.keys('Down');
      await tui.waitFor(/❯ Yes/, 10_000, () => tui.visible());  // the choice moved, then Enter
      tui.keys('Enter');
    }
    // Auto mode whose server-side check does not come through: the user stays in auto mode.
    if (/Enter to stay in auto mode/.test(screen)) tui.keys('Enter');
    await sleep(250);  // the poll interval
  }
}

async function withWorld(body) {
  const world = new World();
  try {
    await body(world);
  } finally {
    await world.close();
  }
}

// No parent request carries lines of the report's middle as a notice shows them (at a line's
// start, perhaps indented: the lines the parent reads back through Read come numbered), nor
// Claude Code's own cut of it.
function assertMiddleNeverSent(seen, lines) {
  for (const req of seen.parentRequests) {
    const text = requestText(req);
    assert.doesNotMatch(text, /characters truncated\] \.\.\.|<persisted-output>/);
    for (const line of lines) {
      const at = text.search(new RegExp(`(^|\n) *${line}`));
      assert.ok(at < 0, `a parent request carries "${line}": ...${text.slice(Math.max(0, at - 1500), at + 200)}`);
    }
  }
}

// What the user's screen (the whole scrollback, as capture-pane gives it) must be while handoff
// works: none of Claude Code's notice markup, at most a few lines of any report, and for each
// agent of `agents` (their descriptions) the one line that stands in for Claude Code's own
// `Agent "X" finished`: what handoff did with its report. Returns those lines.
const handoffLine = (agent) => new RegExp(`Agent "${agent}" finished · handoff (bounded its report: [\\d,]+ -> [\\d,]+ bytes \\(full text kept\\)|delivered its report bounded, with another agent's)`);
function assertTidyScreen(screen, agents) {
  assert.doesNotMatch(screen, /<\/?(task-notification|agent-message|result|persisted-output|usage|task-id)\b/, `notice markup on the screen:\n${screen}`);
  const reportLines = screen.split('\n').filter((l) => /finding \d{4} /.test(l));
  assert.ok(reportLines.length <= 3, `${reportLines.length} lines of a report on the screen:\n${screen}`);
  assert.doesNotMatch(screen, /characters truncated\]/);
  return agents.map((agent) => {
    const lines = screen.split('\n').filter((l) => handoffLine(agent).test(l));
    assert.equal(lines.length, 1, `one handoff line for "${agent}":\n${screen}`);
    return lines[0];
  });
}

// The lines of a session's screen that say something (not blank, not Claude Code's banner,
// spinner or input box), for comparing a session with handoff and one without.
function saying(screen) {
  const from = screen.indexOf('❯ delegate the audit');
  return screen.slice(from).split('\n').map((l) => l.trim())
    .filter((l) => l && !/^[─▔]+$/.test(l) && !/^✻ /.test(l) && !/^❯\s*$/.test(l) && !/shift\+tab|\/effort|\? for shortcuts/.test(l));
}

for (const [mode, review] of [['acceptEdits', 'server'], ['auto', 'server'], ['auto', 'none']]) {
  test(`${mode} mode${review === 'none' ? ' after the fall-back to the local check' : ''}: a background agent's 171 KB report reaches the model bounded (head, verdict, footer), never whole, and every footer call returns the omitted lines`, async () => {
    await withWorld(async (world) => {
      await world.startDaemon();
      world.setup();
      const answer = longAnswer(3001, 57);
      const { respond, seen } = script({ agents: ['CHILD-LONG audit the parser'], answers: { 'CHILD-LONG': answer }, follow: true });
      const { screen } = await session(world, respond, seen, { mode, review, done: (s) => s.followResults !== undefined });
      assert.equal(seen.bounded.length, 1, 'one bounded copy');
      const copy = seen.bounded[0];
      assert.ok(bytes(copy) <= 16 * KiB, `the bounded copy is ${bytes(copy)} bytes`);
      assert.match(copy, /finding 0001 x+/);
      assert.match(copy, /VERDICT: ship it/);
      assert.match(copy, /\[Truncated: 171,016 bytes \/ 3001 lines in full/);
      assert.equal(fs.readFileSync(seen.artifact, 'utf8'), answer, 'the artifact is the report byte for byte');
      assertFollowed(seen, answer, copy);
      assertMiddleNeverSent(seen, ['finding 0500 ', 'finding 1500 ', 'finding 2500 ']);
      // The user's screen: one line saying what handoff did, no notice, no report.
      if (mode === 'auto') {
        // The hand-back is what handoff bounds there; Claude Code's own line for the agent stays.
        assert.match(screen, /Message from an agent · handoff bounded its report: 171,016 -> [\d,]+ bytes \(full text kept\)/);
        assert.match(screen, /Agent "audit 1" finished · \d+s/);
        assertTidyScreen(screen, []);
      } else {
        assertTidyScreen(screen, ['audit 1']);
      }
      assert.match(screen, /handoff: bounded subagent report delivered/);
    });
  });
}

test('auto mode: a `context: fork` skill, which Claude Code runs in the background, reports 171 KB: bounded like an agent\'s, and the screen says so in one line', async () => {
  await withWorld(async (world) => {
    await world.startDaemon();
    world.setup();
    const skill = path.join(world.work, '.claude', 'skills', 'audit');
    fs.mkdirSync(skill, { recursive: true });
    fs.writeFileSync(path.join(skill, 'SKILL.md'),
      '---\nname: audit\ndescription: Audit the parser in depth\ncontext: fork\n---\nCHILD-SKILL audit the parser and report every finding.\n');
    const answer = longAnswer(3001, 57);
    const { respond, seen } = script({ agents: [{ skill: 'audit' }], answers: { 'CHILD-SKILL': answer }, follow: true });
    const { screen } = await session(world, respond, seen, { mode: 'auto', done: (s) => s.followResults !== undefined });
    assert.equal(seen.bounded.length, 1, 'one bounded copy');
    const copy = seen.bounded[0];
    assert.ok(bytes(copy) <= 16 * KiB, `the bounded copy is ${bytes(copy)} bytes`);
    assert.match(copy, /VERDICT: ship it/);
    assert.equal(fs.readFileSync(seen.artifact, 'utf8'), answer);
    assertFollowed(seen, answer, copy);
    assertMiddleNeverSent(seen, ['finding 1500 ']);
    assert.match(screen, /Skill\(audit\)/);
    assertTidyScreen(screen, ['/audit']);
  });
});

test('two agents ending together share one budget: one bounded copy holding both within 48 KiB; the second notice is blocked, not repeated', async () => {
  await withWorld(async (world) => {
    await world.startDaemon();
    world.setup();
    const answers = { 'CHILD-A-': longAnswer(1200, 58, 'A '), 'CHILD-B-': longAnswer(1200, 58, 'B ') };
    const { respond, seen } = script({ agents: ['CHILD-A- part A', 'CHILD-B- part B'], answers });
    const both = (s) => ['A', 'B'].every((t) => s.bounded.some((c) => c.includes(`${t} VERDICT: ship it`)));
    const { screen } = await session(world, respond, seen, { mode: 'default', done: both });
    const [a, b] = assertTidyScreen(screen, ['audit 1', 'audit 2']);
    assert.ok([a, b].filter((l) => /bounded its report/.test(l)).length >= 1, `${a}\n${b}`);
    const total = seen.bounded.reduce((n, c) => n + bytes(c), 0);
    for (const t of ['A', 'B']) {
      const holding = seen.bounded.filter((c) => c.includes(`${t} VERDICT: ship it`));
      assert.equal(holding.length, 1, `agent ${t}'s report was handed over once`);
      assert.match(holding[0], new RegExp(`${t} finding 0001`));
    }
    assert.ok(total <= 48 * KiB + 2 * KiB, `the bounded copies are ${total} bytes together`);
    assertMiddleNeverSent(seen, ['A finding 0600 ', 'B finding 0600 ']);
  });
});

test('a report just over the cap (18.8 KB) is bounded too, and the user\'s screen says what handoff did', async () => {
  await withWorld(async (world) => {
    await world.startDaemon();
    world.setup();
    const answer = longAnswer(330, 57);
    const { respond, seen } = script({ agents: ['CHILD-MID audit'], answers: { 'CHILD-MID': answer } });
    // A terminal tall enough that Claude Code draws the whole blocked notice with its reason.
    const model = await startModel(respond);
    const tui = new Tui(world, model.url, { mode: 'acceptEdits', rows: 450 });
    let screen = '';
    try {
      await tui.waitFor(/❯/);
      await tui.type('delegate the audit');
      await until(tui, world, () => seen.bounded.length > 0, 90_000);
      // What the user is left looking at, once Claude Code has drawn the delivery's summary.
      screen = await tui.waitFor(/handoff: bounded subagent report delivered/, 30_000);
    } finally {
      await tui.close();
      await model.close();
    }
    assert.match(seen.bounded[0], /VERDICT: ship it/);
    assert.match(seen.bounded[0], /\[Truncated: 18,769 bytes \/ 330 lines in full/);
    assert.ok(bytes(seen.bounded[0]) <= 16 * KiB);
    assert.match(screen, /UserPromptSubmit operation blocked by hook:\s*Agent "audit 1" finished · handoff bounded its report: 18,769 -> [\d,]+ bytes \(full text kept\)/);
    assertTidyScreen(screen, ['audit 1']);
  });
});

test('a shell with neither XDG_RUNTIME_DIR nor HANDOFF_SOCKET: the hooks start handoffd on the private fallback, ${TMPDIR}/handoff-UID/handoffd.sock, the 171 KB report is bounded and the screen says so', async () => {
  await withWorld(async (world) => {
    world.artifactDir = path.join(world.dir, 'cache', 'handoff', 'results');
    world.setup();
    const tmp = path.join(world.dir, 'tmp');
    fs.mkdirSync(tmp, { mode: 0o1777 });
    const { socket, killDaemons } = fallbackSocket(tmp);
    const answer = longAnswer(3001, 57);
    const { respond, seen } = script({ agents: ['CHILD-FALLBACK audit'], answers: { 'CHILD-FALLBACK': answer } });
    const env = {
      HANDOFF_SOCKET: null, XDG_RUNTIME_DIR: null, TMPDIR: tmp, HANDOFF_AUTOSTART: '1', HANDOFF_DAEMON: handoffdPath,
      XDG_STATE_HOME: path.join(world.dir, 'state'), XDG_CACHE_HOME: path.join(world.dir, 'cache'),
    };
    try {
      const { screen } = await session(world, respond, seen, { env, done: (s) => s.bounded.length > 0 });
      assert.match(seen.bounded[0], /finding 0001/);
      assert.match(seen.bounded[0], /VERDICT: ship it/);
      assert.match(seen.bounded[0], /\[Truncated: 171,016 bytes/);
      assert.ok(bytes(seen.bounded[0]) <= 16 * KiB);
      assert.match(screen, /handoff bounded its report: 171,016 -> [\d,]+ bytes \(full text kept\)/);
      assertTidyScreen(screen, ['audit 1']);
      assert.equal(fs.statSync(path.dirname(socket)).mode & 0o777, 0o700, 'the fallback directory is private');
      assert.ok(daemonsServing(socket).length > 0, `a handoffd serves ${socket}`);
    } finally {
      killDaemons();
    }
  });
});

test('a short report passes byte for byte as Claude Code\'s own notice: no block, no artifact', async () => {
  await withWorld(async (world) => {
    await world.startDaemon();
    world.setup();
    const answer = longAnswer(40, 60, 'short ');
    const { respond, seen } = script({ agents: ['CHILD-SHORT look'], answers: { 'CHILD-SHORT': answer } });
    const arrived = (s) => s.parentRequests.some((r) => turnText(r).includes('short VERDICT: ship it'));
    const { screen } = await session(world, respond, seen, { done: arrived });
    const notice = seen.parentRequests.map(turnText).find((t) => t.includes('short VERDICT: ship it'));
    assert.ok(notice.includes(`<result>${answer}</result>`), notice.slice(0, 400));
    assert.equal(seen.bounded.length, 0);
    assert.deepEqual(world.artifacts(), []);
    // Nothing of handoff's on the screen: Claude Code's own line for the agent.
    assert.match(screen, /Agent "audit 1" finished · \d+s/);
    assert.doesNotMatch(screen, /handoff:|· handoff /);
  });
});

test('handoffd unavailable: the report is cut by the hooks themselves, head and verdict within 16 KiB, one line naming a private copy of the full text, and the screen says so in one line', async () => {
  await withWorld(async (world) => {
    const cache = path.join(world.dir, 'cache');
    world.setup();  // nothing at the socket, and no autostart
    const answer = longAnswer(3001, 57);
    const { respond, seen } = script({ agents: ['CHILD-NODAEMON go'], answers: { 'CHILD-NODAEMON': answer } });
    const { screen } = await session(world, respond, seen, {
      done: (s) => s.bounded.length > 0, env: { HANDOFF_AUTOSTART: '0', XDG_CACHE_HOME: cache },
    });
    const copy = seen.bounded[0];
    assert.ok(bytes(copy) <= 16 * KiB + 1024, `${bytes(copy)} bytes`);
    assert.match(copy, /finding 0001/, 'the head');
    assert.match(copy, /VERDICT: ship it/, 'the verdict');
    const note = /\[handoff: handoff's daemon was not reached \(.+\); the head and tail above were cut by the hook itself, the full text \(171,016 bytes\) is in (\S+)\]/.exec(copy);
    assert.ok(note, copy.slice(-800));
    assert.equal(path.dirname(note[1]), path.join(cache, 'handoff', 'unbounded'));
    assert.equal(fs.readFileSync(note[1], 'utf8'), answer, 'the named file holds the full text byte for byte');
    assert.equal(fs.statSync(note[1]).mode & 0o777, 0o600);
    assert.deepEqual(world.artifacts(), [], 'nothing in the store: handoffd owns it');
    // The model never got Claude Code's own 100 KB notice; the middle never reached it.
    assertMiddleNeverSent(seen, ['finding 1500 ']);
    // The user sees one line for the agent, saying what handoff did.
    const said = /Agent "audit 1" finished · handoff cut its report itself, handoffd not reached: 171,016 -> [\d,]+ bytes \(full text kept\)/.exec(screen);
    assert.ok(said, screen);
    console.log(`handoffd unavailable, the screen: ${said[0]}`);
    assert.doesNotMatch(screen, /<task-notification>|characters truncated\]/);
  });
});

test('handoffd stopped mid-session (SIGSTOP, it accepts and never answers): within its budget the hooks cut the report themselves, once, head and verdict kept', async () => {
  await withWorld(async (world) => {
    await world.startDaemon();
    world.setup();
    const answer = longAnswer(3001, 57);
    const { respond, seen } = script({ agents: ['CHILD-SLOW audit'], answers: { 'CHILD-SLOW': answer }, childDelayMs: 2000 });
    const arrived = (s) => s.parentRequests.some((r) => turnText(r).includes('VERDICT: ship it'));
    // Stopped while the child works (2 s), so its report meets a daemon that never answers.
    const stop = async (tui) => {
      await until(tui, world, () => seen.childAsked, 60_000);
      process.kill(world.daemon.pid, 'SIGSTOP');
    };
    try {
      await session(world, respond, seen, { done: arrived, during: stop, timeoutMs: 90_000 });
    } finally {
      process.kill(world.daemon.pid, 'SIGCONT');
    }
    const turns = seen.parentRequests.map(turnText).filter((t) => t.includes('VERDICT: ship it'));
    assert.equal(turns.length, 1, 'the report reached the model once');
    assert.doesNotMatch(turns[0], /characters truncated/);
    assert.match(turns[0], /finding 0001/);
    assert.match(turns[0], /\[handoff: handoff's daemon was not reached \(.+\); the head and tail above were cut by the hook itself, the full text \(171,016 bytes\) is in \S+\]/);
    assert.equal(seen.bounded.length, 1);
    assert.ok(bytes(seen.bounded[0]) <= 16 * KiB + 1024, `${bytes(seen.bounded[0])} bytes`);
  });
});

test('a prompt the user typed while the agent ran, and another typed (not sent) as its report arrives: both reach the model intact, the report bounded once', async () => {
  await withWorld(async (world) => {
    await world.startDaemon();
    world.setup();
    const answer = longAnswer(3001, 57);
    const { respond, seen } = script({ agents: ['CHILD-BUSY audit'], answers: { 'CHILD-BUSY': answer }, childDelayMs: 4000 });
    // Both typed while the child works (4 s): the first sent, the second left in the input box
    // once the model has the first (the box is empty again), where it is when the report lands.
    const during = async (tui) => {
      await until(tui, world, () => seen.childAsked, 60_000);
      await tui.type('typed: first question');
      await until(tui, world, () => seen.typed.includes('typed: first question'), 30_000);
      tui.keys('-l', 'typed: second question');
    };
    const ready = (s) => s.bounded.length > 0;
    const model = await startModel(respond);
    const tui = new Tui(world, model.url, { mode: 'acceptEdits' });
    try {
      await tui.waitFor(/❯/);
      await tui.type('delegate the audit');
      await during(tui);
      await until(tui, world, () => ready(seen), 90_000);
      tui.keys('Enter');
      await until(tui, world, () => seen.typed.includes('typed: second question'), 30_000);
      await sleep(1500);  // a window for what must not come (a second copy of the report)
    } finally {
      await tui.close();
      await model.close();
    }
    assert.deepEqual(seen.typed, ['typed: first question', 'typed: second question']);
    assert.equal(seen.bounded.length, 1);
    assert.match(seen.bounded[0], /VERDICT: ship it/);
    assertMiddleNeverSent(seen, ['finding 1500 ']);
  });
});

test('the screen beside Claude Code\'s own: without handoff one line for the finished agent; with handoff that line says what handoff did, one line more says the copy was delivered, nothing else differs, and /tasks lists the agent done in both', async () => {
  const answer = longAnswer(3001, 57);
  const screens = {};
  for (const withHandoff of [false, true]) {
    await withWorld(async (world) => {
      if (withHandoff) {
        await world.startDaemon();
        world.setup();
      }
      const { respond, seen } = script({ agents: ['CHILD-LONG audit the parser'], answers: { 'CHILD-LONG': answer } });
      // The report reached the model: Claude Code's notice, or handoff's bounded copy.
      const arrived = withHandoff ? (s) => s.bounded.length > 0 : (s) => s.parentRequests.some((r) => turnText(r).includes('VERDICT: ship it'));
      // Claude Code's own list of its background tasks, after: the agent is there, done.
      const tasks = async (tui) => {
        await tui.type('/tasks');
        return tui.waitFor(/✔ audit 1\s+done/, 30_000, () => tui.visible());
      };
      const { screen, afterwards } = await session(world, respond, seen, { mode: 'acceptEdits', done: arrived, after: tasks });
      screens[withHandoff ? 'handoff' : 'none'] = screen;
      assert.match(afterwards, /Completed/);
    });
  }
  assert.match(screens.none, /Agent "audit 1" finished · \d+s/);
  assertTidyScreen(screens.none, []);
  assertTidyScreen(screens.handoff, ['audit 1']);
  const none = saying(screens.none);
  const handoff = saying(screens.handoff);
  // The same lines, but Claude Code's `Agent "audit 1" finished · 0s` is handoff's line (after
  // Claude Code's "UserPromptSubmit operation blocked by hook:"), and the delivery's line.
  const ours = /^(● )?(UserPromptSubmit operation blocked by hook:|Agent "audit 1" finished · handoff |handoff: bounded subagent report delivered)/;
  const theirs = /^(● )?Agent "audit 1" finished · \d+s$/;
  assert.deepEqual(handoff.filter((l) => !ours.test(l)), none.filter((l) => !theirs.test(l)),
    `without handoff:\n${none.join('\n')}\n\nwith handoff:\n${handoff.join('\n')}`);
  assert.ok(handoff.length <= none.length + 2, `${handoff.length} lines against ${none.length}`);
});
