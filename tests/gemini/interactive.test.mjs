// handoff's hooks in the real Gemini CLI 0.61.0 as most people run it: its terminal UI (`gemini`,
// no -p) under tmux (../support/tmux.mjs), typed into with send-keys and read with capture-pane,
// on the scripted Gemini API. The parent delegates one 171,016-byte report; the model must get it
// bounded, and the user's screen must stay as tidy as Gemini's own without handoff. What Gemini
// draws was looked at first; the assertions say what it draws, and the test log prints the lines
// that differ.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { test } from 'node:test';

import { World, geminiPath, longAnswer } from './harness.mjs';
import { lastResponses, startScriptedGemini, toolNames } from './scripted-gemini.mjs';
import { TmuxSession, linesMissing } from '../support/tmux.mjs';
import { loadScaled, sleep } from '../support/world.mjs';

const bytes = (s) => Buffer.byteLength(s, 'utf8');
const answer = longAnswer(3001, 57);
const frame = (text) => `Subagent 'reporter' finished.\nTermination Reason: GOAL\nResult:\n${text}`;
const PROMPT = 'PARENT delegate the audit';
const DONE = 'The audit is done.';

// A line showing the child's report text (its findings or its verdict).
const reportLine = /finding \d{4} |VERDICT: ship it/;

// Gemini redraws hints and spinners for a while after the reply: a screen is read once it has
// been still for this long, ms.
const QUIET_MS = 2_000;

// One interactive session in `world` (set up or not by the caller): the user types PROMPT; the
// parent delegates one report to `reporter`, whose answer is `answer`, then replies DONE.
// Resolves to { screen, expanded, got, hookStatus }: the whole scrollback once the reply is drawn
// and the screen is still, the same after the user presses Ctrl+O (Gemini's "show more"), the
// invoke_agent result the parent model got, and every status line naming a running hook seen on
// the way (Gemini draws one while a hook runs, then takes it away).
async function session(world) {
  let got;
  const api = await startScriptedGemini((req) => {
    if (toolNames(req).includes('complete_task')) return { calls: [{ name: 'complete_task', args: { result: answer } }] };
    if (!JSON.stringify(req.contents ?? []).includes(PROMPT)) return { text: 'ok' };  // Gemini's own side requests
    const responses = lastResponses(req);
    if (responses.length === 0) return { calls: [{ name: 'invoke_agent', args: { agent_name: 'reporter', prompt: 'Write report CHILD-0' } }] };
    if (responses[0].name === 'invoke_agent') got = responses[0].response.output ?? JSON.stringify(responses[0].response);
    return { text: DONE };
  });
  world.baseUrl = api.url;
  const env = world.env();
  delete env.TERM;  // the terminal's own: xterm-256color
  const tui = new TmuxSession({ dir: world.dir, argv: [process.execPath, geminiPath, '-m', 'gemini-2.5-flash'], cwd: world.project, env });
  try {
    // The input box is drawn before Gemini's config is ready (a prompt typed then is queued,
    // with a line saying so); its banner only once it is.
    await tui.waitFor(/Gemini CLI v0\.61\.0[^]*Type your message/, loadScaled(120_000));
    await tui.settled(1_000, loadScaled(60_000));
    tui.type(PROMPT);
    await tui.waitFor(new RegExp(`> +${PROMPT}`), loadScaled(30_000));
    await sleep(300);  // the input box takes the text before Enter
    tui.key('Enter');
    const hookStatus = new Set();
    await tui.waitFor({
      test: (s) => {
        for (const line of s.split('\n')) if (/Executing Hooks?:/.test(line)) hookStatus.add(line.trim());
        return new RegExp(`✦ ${DONE}`).test(s);
      },
      toString: () => `✦ ${DONE}`,
    }, loadScaled(180_000));
    // Gemini keeps a hook's status line at least 3 s after the hook started
    // (WARNING_PROMPT_DURATION_MS), static once it ended: the screen is read once it is gone.
    await tui.waitFor({ test: (s) => !/Executing Hooks?:/.test(s), toString: () => 'no hook status line' }, loadScaled(30_000));
    const screen = await tui.settled(QUIET_MS, loadScaled(60_000));
    // Ctrl+O toggles Gemini's expanded view; its hint says when the redraw is done (for the
    // whole report, seconds after the key on this machine).
    tui.key('C-o');
    await tui.waitFor(/Press Ctrl\+O to collapse lines of the last response/, loadScaled(90_000));
    const expanded = await tui.settled(QUIET_MS, loadScaled(60_000));
    return { screen: normalize(screen, world), expanded: normalize(expanded, world), got, hookStatus: [...hookStatus] };
  } finally {
    await tui.close();
    await api.close();
  }
}

// A screen's lines without trailing blanks, the world's temporary path as <world>.
function normalize(screen, world) {
  return screen.split('\n').map((l) => l.replaceAll(world.dir, '<world>').trimEnd()).join('\n');
}

// The lines of a screen that say something: not blank, not the input box's rules, and not the
// lines Gemini draws or not by timing alone: the hints it shows for a while and then takes away,
// and its note that a prompt typed while it still starts is queued.
const transient = [
  /Press Ctrl\+O to (show more|collapse) lines of the last response/,
  /Warning: True color \(24-bit\) support not detected/,
  /^ℹ (Initializing\.\.\.|Waiting for MCP servers to initialize\.\.\.).* prompts will be queued\.$/i,
];
const saying = (screen) => screen.split('\n').map((l) => l.trim()).filter((l) => l && !/^─+$/.test(l) && !transient.some((t) => t.test(l)));

const countReport = (screen) => screen.split('\n').filter((l) => reportLine.test(l)).length;

// Gemini's own rendering, without handoff (no setup, no daemon): run once, shared by the cases.
let baselineRun;
function baseline() {
  baselineRun ??= (async () => {
    const world = new World();
    try {
      return await session(world);
    } finally {
      await world.close();
    }
  })();
  return baselineRun;
}

// What Gemini CLI draws for the invoke_agent call without handoff: its agent box, collapsed.
const agentBox = [
  /^╭─+╮$/,
  /^│ ≡ Agent Completed \(ctrl\+o to expand\)\s*│$/,
  /^│ ✓ reporter · Completed successfully\s*│$/,
  /^╰─+╯$/,
];
// What it draws for the same call with handoff's AfterTool hook: the read_file it asked for
// (tailToolCallRequest) in place of the call, naming the bounded copy in the project temp dir.
const readFileLine = /^✓ {2}ReadFile {2}\S+\/\.\.\.[0-9a-f]+\.txt$/;

// Compares `screen` with the baseline's: prints the differing lines; asserts that the only
// lines the baseline lacks are the read_file line, and the only ones it has that `screen` lacks
// are its agent box.
function assertLikeBaseline(name, screen, base) {
  const added = linesMissing(saying(base), saying(screen));
  const dropped = linesMissing(saying(screen), saying(base));
  console.log(`${name}: lines only with handoff:\n  ${added.join('\n  ') || '(none)'}\nlines only without:\n  ${dropped.join('\n  ') || '(none)'}`);
  assert.equal(added.length, 1, `lines the baseline lacks:\n${added.join('\n')}`);
  assert.match(added[0], readFileLine);
  assert.equal(dropped.length, agentBox.length, `lines only the baseline has:\n${dropped.join('\n')}`);
  agentBox.forEach((re, i) => assert.match(dropped[i], re));
}

// Nothing of handoff's on the screen: no note, no hook output or failure, no JSON, no stack.
function assertTidy(screen) {
  assert.doesNotMatch(screen, /handoff|\[handoff:|[Hh]ook|[Ee]rror|[Ff]ailed|Truncated|omitted lines|\{"|^\s+at .+:\d+:\d+\)?$/m, screen);
}

test('without handoff (the baseline): Gemini\'s UI shows the agent box collapsed, Ctrl+O draws the whole report, and the model gets all 171,079 bytes', { timeout: loadScaled(400_000) }, async () => {
  const base = await baseline();
  assert.equal(base.got, frame(answer), 'the whole framed answer');
  assert.equal(bytes(base.got), 171079);
  agentBox.forEach((re) => assert.ok(saying(base.screen).some((l) => re.test(l)), `${re} on:\n${base.screen}`));
  assert.equal(countReport(base.screen), 0, base.screen);
  const expandedLines = countReport(base.expanded);
  assert.ok(expandedLines >= 3000, `${expandedLines} report lines once expanded`);
  console.log(`baseline: the model got ${bytes(base.got)} bytes; report lines on the screen ${countReport(base.screen)}, after Ctrl+O ${expandedLines}`);
});

test('with handoff: the model gets the 171,016-byte report bounded (head, verdict, footer), and the screen is Gemini\'s own but for one ReadFile line in place of the agent box', { timeout: loadScaled(400_000) }, async () => {
  const base = await baseline();
  const world = new World();
  try {
    world.setup();
    await world.startDaemon();
    const run = await session(world);
    const text = run.got;
    assert.ok(text, 'the parent got an invoke_agent result');
    assert.ok(bytes(text) <= 16 * 1024, `${bytes(text)} bytes`);
    assert.ok(text.startsWith('finding 0001 '), text.slice(0, 200));
    assert.ok(text.includes('VERDICT: ship it'));
    assert.match(text, /\[Truncated: 171,016 bytes/);
    const omitted = text.match(/omitted lines (\d+)-(\d+)/);
    assert.ok(omitted, text.slice(-600));
    assert.match(text, /read_file start_line=\d+ end_line=\d+/);
    assert.doesNotMatch(text, /daemon was not reached/);
    assert.equal(world.artifacts().length, 1);

    assertTidy(run.screen);
    assertTidy(run.expanded);
    assert.ok(countReport(run.screen) <= countReport(base.screen), run.screen);
    assert.ok(countReport(run.expanded) <= countReport(base.expanded), run.expanded);
    assert.equal(countReport(run.expanded), 0, `Ctrl+O draws no report text with handoff:\n${run.expanded}`);
    assertLikeBaseline('with handoff', run.screen, base.screen);
    // While its hooks run, Gemini's status line names them by the name setup gives them, not by
    // the command line (a poll every 200 ms sees it when a hook takes that long).
    for (const line of run.hookStatus) assert.match(line, /Executing Hooks?: handoff\b/, line);
    assert.ok(run.hookStatus.every((line) => !line.includes('hook gemini')), run.hookStatus.join('\n'));
    console.log(`with handoff: hook status lines seen: ${JSON.stringify(run.hookStatus)}`);
    console.log(`with handoff: the model got ${bytes(text)} bytes (without: ${bytes(base.got)}); report lines on the screen ${countReport(run.screen)}, after Ctrl+O ${countReport(run.expanded)} (without: ${countReport(base.screen)}, ${countReport(base.expanded)})`);
  } finally {
    await world.close();
  }
});

test('handoffd unavailable (setup done, no daemon, no autostart): the model gets head and verdict with the one not-reached line, and the screen is as tidy', { timeout: loadScaled(400_000) }, async () => {
  const base = await baseline();
  const world = new World();
  try {
    world.setup();  // no daemon at the socket, none started (HANDOFF_AUTOSTART=0)
    const run = await session(world);
    const text = run.got;
    assert.ok(text, 'the parent got an invoke_agent result');
    assert.ok(bytes(text) <= 16 * 1024, `${bytes(text)} bytes`);
    assert.ok(text.startsWith('finding 0001 '), text.slice(0, 200));
    assert.ok(text.includes('VERDICT: ship it'));
    const notes = text.split('\n').filter((l) => l.startsWith('[handoff:'));
    assert.equal(notes.length, 1, notes.join('\n'));
    const note = /^\[handoff: handoff's daemon was not reached \(.+\); the head and tail above were cut by the hook itself, the full text \(171,016 bytes\) is in (\S+)\]$/.exec(text.split('\n').at(-1));
    assert.ok(note, text.slice(-600));
    assert.equal(fs.readFileSync(note[1], 'utf8'), answer, 'the named file holds the full text byte for byte');
    assert.equal(world.artifacts().length, 0, 'nothing in the store: handoffd owns it');

    assertTidy(run.screen);
    assertTidy(run.expanded);
    assert.equal(countReport(run.screen), 0, run.screen);
    assert.equal(countReport(run.expanded), 0, run.expanded);
    assertLikeBaseline('handoffd unavailable', run.screen, base.screen);
    console.log(`handoffd unavailable: the model got ${bytes(text)} bytes; report lines on the screen ${countReport(run.screen)}, after Ctrl+O ${countReport(run.expanded)}`);
  } finally {
    await world.close();
  }
});
