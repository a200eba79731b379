// handoff's MCP server inside a real Codex CLI 0.171.0 (pinned, project-local; 0.169.0 too), on the scripted
// Responses model, with a real handoffd on a temporary socket: `handoff setup codex` writes the
// server, a headless parent `codex exec` calls subagent_spawn / subagent_wait / ..., each child is
// a real `codex exec` the server starts, and every footer call is run through Codex's own shell
// tool (exec_command).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

import { World, cliPath, longAnswer } from './harness.mjs';
import { daemonsServing, waitFor, fallbackSocket } from '../support/world.mjs';
import { callOutputs, hasPrompt, mcpCall, startModel } from './scripted-responses.mjs';

const KiB = 1024;
const bytes = (s) => Buffer.byteLength(s, 'utf8');
// Codex 0.169.0 gives a model it does not know an MCP output of at most 11,964 bytes whole.
const CODEX_MCP_WHOLE = 11_964;

// A world whose Codex runs handoff's server as `handoff setup codex` writes it.
async function codexWorld(respond, { extra = '' } = {}) {
  const world = new World();
  const model = await startModel(respond);
  world.configure(model.baseUrl, { extra });
  execFileSync(cliPath, ['setup', 'codex'], { env: world.env(), encoding: 'utf8', timeout: 30_000 });
  return { world, model };
}

// The parent's script: `steps` in order, each called with the outputs of the previous calls
// (text by call_id, in call order) and returning { calls } or { text }. Children answer from
// `answers` by the marker their task holds.
function script(steps, answers) {
  const seen = { parent: [], outputs: [] };
  const respond = (request) => {
    for (const [marker, answer] of Object.entries(answers))
      if (hasPrompt(request, marker)) return typeof answer === 'function' ? answer(request) : { text: answer };
    seen.parent.push(request);
    const outputs = [...callOutputs(request).values()].map((o) => o.text);
    if (seen.parent.length > 1) seen.outputs.push(outputs);
    const step = steps[seen.parent.length - 1] ?? (() => ({ text: 'done' }));
    return step(outputs);
  };
  return { respond, seen };
}

const spawn = (task, extra = {}) => mcpCall('handoff', 'subagent_spawn', { task, ...extra });
const wait = (args = {}) => mcpCall('handoff', 'subagent_wait', args);

// The exec_command calls a footer names, as Codex's shell tool runs them.
function footerCommands(text) {
  return [...text.matchAll(/exec_command `([^`]+)`/g)].map((m) => m[1]);
}

const shell = (cmd) => ({ name: 'exec_command', arguments: { cmd } });

// What Codex writes where it cut a tool's output (its shell's and its cells' markers).
const CODEX_CUT = /chars truncated|Warning: truncated output|tokens truncated/;

// The pages the footer's calls returned (in order) came back uncut and, joined, are exactly the
// lines the bounded text says it omitted from `answer`.
function assertPagesAreOmitted(pages, bounded, answer) {
  for (const page of pages) assert.doesNotMatch(page, CODEX_CUT);
  const omitted = bounded.match(/omitted lines (\d+)-(\d+)/);
  assert.ok(omitted, `the footer names the omitted lines:\n${bounded.slice(-800)}`);
  const expected = answer.split('\n').slice(Number(omitted[1]) - 1, Number(omitted[2])).join('\n');
  assert.equal(pages.map((p) => p.replace(/\n$/, '')).join('\n'), expected);
}

// The text Codex's exec_command output carries after its header.
function shellOutput(text) {
  const at = text.indexOf('Output:\n');
  assert.ok(at >= 0, `an exec_command output: ${text.slice(0, 200)}`);
  return text.slice(at + 'Output:\n'.length);
}

test('a 171 KB child answer reaches the parent bounded under Codex\'s MCP cut, and every footer call returns the omitted lines', async () => {
  const answer = longAnswer(3001, 57);
  assert.equal(bytes(answer), 171_016);
  const { respond, seen } = script([
    () => ({ calls: [spawn('CHILD-LONG audit the parser')] }),
    () => ({ calls: [wait()] }),
    ([bounded]) => ({ calls: footerCommands(bounded).map(shell) }),
    // A footer with no room for every call names the command that lists them: run those too.
    (outputs) => ({ calls: outputs.flatMap((o) => footerCommands(shellOutput(o))).map(shell) }),
  ], { 'CHILD-LONG': answer });
  const { world, model } = await codexWorld(respond);
  try {
    await world.startDaemon();
    const run = await world.exec('delegate the audit', { model });
    assert.equal(run.code, 0, run.stderr);
    const [spawned] = seen.outputs[0];
    assert.match(spawned, /^Wall time[\s\S]*Started subagent cx-[0-9a-f]{6} "CHILD-LONG audit the parser"/);
    const [bounded] = seen.outputs[1];
    assert.ok(bytes(bounded) <= CODEX_MCP_WHOLE + 100, `the wait's output is ${bytes(bounded)} bytes`);
    assert.doesNotMatch(bounded, /tokens truncated/, 'Codex did not cut it again');
    assert.match(bounded, /finding 0001 /);
    assert.match(bounded, /VERDICT: ship it/);
    assert.match(bounded, /\[Truncated: 171,016 bytes \/ 3001 lines in full/);
    const commands = footerCommands(bounded);
    assert.ok(commands.length >= 1, bounded.slice(-1500));
    // Every page through Codex's own shell, uncut, and together exactly the omitted lines.
    const listed = seen.outputs[2].map(shellOutput);
    const planned = commands.length === 1 && /--plan/.test(commands[0]);
    for (const out of listed) assert.doesNotMatch(out, CODEX_CUT);
    const pages = (planned ? seen.outputs[3] : seen.outputs[2]).map(shellOutput);
    if (planned) assert.ok(pages.length > 1 && pages.length === footerCommands(listed[0]).length, listed[0]);
    assertPagesAreOmitted(pages, bounded, answer);
    // The full text is the child's exact answer, a 0600 artifact.
    const [artifact] = world.artifacts();
    assert.equal(fs.readFileSync(path.join(world.artifactDir, artifact), 'utf8'), answer);
    assert.equal(fs.statSync(path.join(world.artifactDir, artifact)).mode & 0o777, 0o600);
    // Until the model read them back, no request of the parent carried the omitted lines.
    for (const r of seen.parent.slice(0, 3)) assert.ok(!JSON.stringify(r.input).includes('finding 1500 '), 'an omitted line was sent');
  } finally {
    await model.close();
    await world.close();
  }
});

test('four children finishing together share one budget: one wait answer within the cut, each head and verdict', async () => {
  const answers = {};
  for (const t of ['A', 'B', 'C', 'D']) answers[`CHILD-${t}-`] = longAnswer(700, 58, `${t} `);
  const { respond, seen } = script([
    () => ({ calls: ['A', 'B', 'C', 'D'].map((t) => spawn(`CHILD-${t}- part ${t}`)) }),
    () => ({ calls: [wait()] }),
  ], answers);
  const { world, model } = await codexWorld(respond);
  try {
    await world.startDaemon();
    const run = await world.exec('delegate four parts', { model });
    assert.equal(run.code, 0, run.stderr);
    const [batch] = seen.outputs[1];
    assert.ok(bytes(batch) <= CODEX_MCP_WHOLE + 100, `the wait's output is ${bytes(batch)} bytes`);
    assert.doesNotMatch(batch, /tokens truncated/);
    for (const t of ['A', 'B', 'C', 'D']) {
      assert.match(batch, new RegExp(`${t} VERDICT: ship it`), `child ${t}'s verdict`);
      assert.match(batch, new RegExp(`${t} finding 0001`), `child ${t}'s head`);
    }
    assert.equal(world.artifacts().length, 4);
  } finally {
    await model.close();
    await world.close();
  }
});

test('a short answer passes byte for byte, with no artifact; send continues the same child conversation', async () => {
  const short = 'All 12 tests pass.\nVERDICT: fine';
  let childRequests = 0;
  const { respond, seen } = script([
    () => ({ calls: [spawn('CHILD-SHORT run the tests', { title: 'tests' })] }),
    () => ({ calls: [wait()] }),
    ([out]) => ({ calls: [mcpCall('handoff', 'subagent_send', { id: out.match(/Subagent (cx-[0-9a-f]{6})/)[1], message: 'FOLLOW-UP now lint' })] }),
    () => ({ calls: [wait()] }),
  ], {
    'CHILD-SHORT': (request) => {
      childRequests++;
      return { text: hasPrompt(request, 'FOLLOW-UP') ? 'lint clean' : short };
    },
  });
  const { world, model } = await codexWorld(respond);
  try {
    await world.startDaemon();
    const run = await world.exec('delegate the tests', { model });
    assert.equal(run.code, 0, run.stderr);
    const [first] = seen.outputs[1];
    assert.ok(first.includes(`"tests" finished.\n\n${short}`) || first.includes(short), first);
    assert.ok(first.includes(short));
    assert.deepEqual(world.artifacts(), []);
    const [sent] = seen.outputs[2];
    assert.match(sent, /Sent to subagent cx-[0-9a-f]{6} "tests": turn 2 started/);
    const [second] = seen.outputs[3];
    assert.match(second, /cx-[0-9a-f]{6}\.2 "tests \(turn 2\)"/);
    assert.match(second, /lint clean/);
    // The follow-up went to the same Codex conversation: its request held the first turn.
    const followUp = model.requests.filter((r) => hasPrompt(r, 'FOLLOW-UP'));
    assert.ok(followUp.length >= 1 && hasPrompt(followUp[0], 'CHILD-SHORT'), 'turn 2 continued turn 1');
    assert.equal(childRequests, 2);
  } finally {
    await model.close();
    await world.close();
  }
});

test('handoffd killed (kill -9) between spawn and wait: the server starts another, and the result is not lost', async () => {
  const answer = longAnswer(400, 57);
  let release;
  const gate = new Promise((r) => (release = r));
  const { respond, seen } = script([
    () => ({ calls: [spawn('CHILD-KILL slow work')] }),
    () => ({ calls: [wait()] }),
  ], { 'CHILD-KILL': async () => { await gate; return { text: answer }; } });
  const { world, model } = await codexWorld(respond);
  try {
    await world.startDaemon();
    const running = world.exec('delegate', {
      model,
      env: { HANDOFF_AUTOSTART: '1', HANDOFF_DAEMON: process.env.HANDOFFD ?? path.resolve('build/daemon/handoffd') },
    });
    // Once the child is running (its model request arrived), handoffd dies.
    await waitFor('the child\'s model request', () => model.requests.some((r) => hasPrompt(r, 'CHILD-KILL')), { timeoutMs: 120_000 });
    world.daemon.kill('SIGKILL');
    await new Promise((r) => world.daemon.once('exit', r));
    world.daemon = undefined;
    release();
    const run = await running;
    assert.equal(run.code, 0, run.stderr);
    const [bounded] = seen.outputs[1];
    assert.match(bounded, /VERDICT: ship it/);
    assert.match(bounded, /finding 0001 /);
  } finally {
    release();
    await model.close();
    await world.close();
  }
});

test('bad arguments get a clear error the model can act on; an unknown subagent id is named', async () => {
  const { respond, seen } = script([
    () => ({ calls: [mcpCall('handoff', 'subagent_spawn', { title: 'no task' }), mcpCall('handoff', 'subagent_check', { id: 'cx-nope' }),
      mcpCall('handoff', 'subagent_wait', { timeoutMs: -5 })] }),
  ], {});
  const { world, model } = await codexWorld(respond);
  try {
    await world.startDaemon();
    const run = await world.exec('try', { model });
    assert.equal(run.code, 0, run.stderr);
    const [spawnOut, checkOut, waitOut] = seen.outputs[0];
    assert.match(spawnOut, /subagent_spawn: `task` is required/);
    assert.match(checkOut, /subagent_check: no subagent cx-nope in this Codex thread/);
    assert.match(waitOut, /subagent_wait: `timeoutMs` must be an integer from 0 to 86400000/);
  } finally {
    await model.close();
    await world.close();
  }
});

test('a child whose model fails, and one that hangs past the turn timeout: each an error result naming why, no hung call', async () => {
  const { respond, seen } = script([
    () => ({ calls: [spawn('CHILD-FAIL go'), spawn('CHILD-HANG go')] }),
    () => ({ calls: [wait()] }),
  ], {
    'CHILD-FAIL': () => ({ error: { status: 400, message: 'scripted refusal' } }),
    'CHILD-HANG': () => new Promise(() => {}),  // never answers
  });
  const { world, model } = await codexWorld(respond);
  try {
    await world.startDaemon();
    // 15 s: long enough for the failing child's own codex exec to end on a loaded machine first.
    const run = await world.exec('delegate', { model, env: { HANDOFF_CODEX_TURN_TIMEOUT_S: '15' } });
    assert.equal(run.code, 0, run.stderr);
    const [batch] = seen.outputs[1];
    assert.match(batch, /Subagent cx-[0-9a-f]{6} "CHILD-FAIL go" failed\.\nError: codex exec exited with status 1/);
    assert.match(batch, /Subagent cx-[0-9a-f]{6} "CHILD-HANG go" failed\.\nError: the turn ran past 15 s \(HANDOFF_CODEX_TURN_TIMEOUT_S\) and was stopped/);
  } finally {
    await model.close();
    await world.close();
  }
});

test('Codex killed mid-wait: the finished child\'s result stays queued, and the resumed thread\'s next wait gets it', async () => {
  const fast = longAnswer(800, 57, 'F ');
  let phase = 'first';
  let resumedRequests = 0;
  const parentRequests = [];
  const respond = (request) => {
    if (hasPrompt(request, 'CHILD-FAST')) return { text: fast };
    if (hasPrompt(request, 'CHILD-SLOW')) return new Promise(() => {});  // runs until killed
    parentRequests.push(request);
    if (phase === 'first') {
      const outputs = [...callOutputs(request).values()];
      if (outputs.length === 0) return { calls: [spawn('CHILD-FAST quick'), spawn('CHILD-SLOW slow')] };
      return { calls: [wait()] };  // waits for both: never answered before the kill
    }
    // Resumed: the killed wait's call comes back "aborted"; the model waits again.
    resumedRequests++;
    return resumedRequests === 1 ? { calls: [wait()] } : { text: 'resumed' };
  };
  const world = new World();
  const model = await startModel(respond);
  world.configure(model.baseUrl);
  execFileSync(cliPath, ['setup', 'codex'], { env: world.env(), encoding: 'utf8', timeout: 30_000 });
  try {
    await world.startDaemon();
    const { spawn: spawnProcess } = await import('node:child_process');
    const { codexPath } = await import('./harness.mjs');
    const parent = spawnProcess(codexPath, ['exec', '--json', '--skip-git-repo-check', '--dangerously-bypass-approvals-and-sandbox', 'delegate'],
      { cwd: world.work, env: world.env(), stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    parent.stdout.on('data', (d) => (out += d));
    // Once the fast child's result is in handoffd and the wait is asleep there, Codex dies.
    await world.waitForStatus('the wait asleep in handoffd with the fast child completed and the slow one running',
      (status) => status.waits === 1 && status.children.completed === 1 && status.children.running === 1, { timeoutMs: 60_000 });
    parent.kill('SIGKILL');
    await new Promise((r) => parent.once('close', r));
    const thread = out.split('\n').filter(Boolean).map((l) => JSON.parse(l)).find((e) => e.type === 'thread.started').thread_id;
    // The same thread, resumed: a fresh handoff mcp, whose wait without ids finds the result.
    phase = 'resumed';
    const before = parentRequests.length;
    const resumed = await world.exec('are they done?', { model, resume: thread });
    assert.equal(resumed.code, 0, resumed.stderr);
    const got = parentRequests.slice(before).flatMap((r) => [...callOutputs(r).values()].map((o) => o.text)).join('\n');
    assert.match(got, /"CHILD-FAST quick" finished/);
    assert.match(got, /F VERDICT: ship it/);
  } finally {
    await model.close();
    await world.close();
  }
});

// A catalog model (gpt-6.1-sol: code mode, multi-agent v2) reaches handoff's tools only inside
// `exec`, as JavaScript calling `tools.mcp__handoff__*`; what it reads is the cell's output:
// "Script completed\nWall time ...\nOutput:\n" and what the script passed to text(). Codex cuts a
// cell's output past about 40,000 bytes ("Warning: truncated output"); a batch must come whole.
const CODEX_EXEC_CELL = 40_000;
const exec = (input) => ({ name: 'exec', input });
// The script of one cell: spawn each task, wait once, and print every text block of the answer.
const spawnAndWait = (tasks) => exec([
  ...tasks.map((t) => `await tools.mcp__handoff__subagent_spawn({task: ${JSON.stringify(t)}});`),
  'const w = await tools.mcp__handoff__subagent_wait({});',
  'for (const c of w.content) text(c.text);',
].join('\n'));
// One footer command through Codex's shell tool inside a cell; the cell prints its output alone.
const shellInCell = (cmd) => exec(`const r = await tools.exec_command({cmd: ${JSON.stringify(cmd)}});\ntext(r.output);`);

function cellOutput(text) {
  const at = text.indexOf('Output:\n');
  assert.ok(at >= 0 && text.startsWith('Script completed'), `an exec cell's output: ${text.slice(0, 300)}`);
  return text.slice(at + 'Output:\n'.length);
}

// A script whose steps answer with code-mode cells (`custom`), for a catalog model.
async function catalogWorld(respond) {
  const world = new World();
  const model = await startModel(respond);
  world.configure(model.baseUrl, { model: 'gpt-6.1-sol' });
  execFileSync(cliPath, ['setup', 'codex'], { env: world.env(), encoding: 'utf8', timeout: 30_000 });
  return { world, model };
}

test('a catalog model in code mode: exec spawns and waits, the 171 KB answer arrives bounded and whole in one cell, and the footer\'s commands run through tools.exec_command give back the omitted lines', async () => {
  const answer = longAnswer(3001, 57);
  const { respond, seen } = script([
    () => ({ custom: [spawnAndWait(['CHILD-LONG audit the parser'])] }),
    ([cell]) => ({ custom: footerCommands(cellOutput(cell)).map(shellInCell) }),
    (cells) => {
      const listed = cells.map(cellOutput);
      return { custom: listed.flatMap((o) => (/^exec_command `/m.test(o) ? footerCommands(o) : [])).map(shellInCell) };
    },
  ], { 'CHILD-LONG': answer });
  const { world, model } = await catalogWorld(respond);
  try {
    await world.startDaemon();
    const run = await world.exec('delegate the audit', { model });
    assert.equal(run.code, 0, run.stderr);
    const [cell] = seen.outputs[0];
    const bounded = cellOutput(cell);
    assert.ok(bytes(cell) <= CODEX_EXEC_CELL, `the cell's output is ${bytes(cell)} bytes`);
    assert.ok(bytes(bounded) <= CODEX_MCP_WHOLE + 100, `the wait's answer is ${bytes(bounded)} bytes`);
    assert.doesNotMatch(cell, /Warning: truncated output|tokens truncated/);
    assert.match(bounded, /finding 0001 /);
    assert.match(bounded, /VERDICT: ship it/);
    assert.match(bounded, /\[Truncated: 171,016 bytes \/ 3001 lines in full/);
    const commands = footerCommands(bounded);
    const planned = commands.length === 1 && /--plan/.test(commands[0]);
    const pages = (planned ? seen.outputs[2] : seen.outputs[1]).map(cellOutput);
    for (const page of [...seen.outputs[1], ...(seen.outputs[2] ?? [])]) assert.doesNotMatch(page, CODEX_CUT);
    assertPagesAreOmitted(pages, bounded, answer);
    for (const r of seen.parent.slice(0, 2)) assert.ok(!JSON.stringify(r.input).includes('finding 1500 '), 'an omitted line was sent');
  } finally {
    await model.close();
    await world.close();
  }
});

test('a catalog model in code mode: four 40 KB children in one wait share one budget, the answer whole in one cell, each head and verdict', async () => {
  const answers = {};
  for (const t of ['A', 'B', 'C', 'D']) answers[`CHILD-${t}-`] = longAnswer(700, 58, `${t} `);
  const { respond, seen } = script([
    () => ({ custom: [spawnAndWait(['A', 'B', 'C', 'D'].map((t) => `CHILD-${t}- part ${t}`))] }),
  ], answers);
  const { world, model } = await catalogWorld(respond);
  try {
    await world.startDaemon();
    const run = await world.exec('delegate the audit', { model });
    assert.equal(run.code, 0, run.stderr);
    const [cell] = seen.outputs[0];
    assert.ok(bytes(cell) <= CODEX_EXEC_CELL, `the cell's output is ${bytes(cell)} bytes`);
    assert.doesNotMatch(cell, /Warning: truncated output|tokens truncated/);
    const batch = cellOutput(cell);
    for (const t of ['A', 'B', 'C', 'D']) {
      assert.match(batch, new RegExp(`${t} finding 0001 `));
      assert.match(batch, new RegExp(`${t} VERDICT: ship it`));
    }
  } finally {
    await model.close();
    await world.close();
  }
});


test('a shell with neither XDG_RUNTIME_DIR nor HANDOFF_SOCKET: handoff mcp starts handoffd on the private fallback, $TMPDIR/handoff-UID/handoffd.sock, and the 171 KB answer arrives bounded', async () => {
  const answer = longAnswer(3001, 57);
  const { respond, seen } = script([
    () => ({ calls: [spawn('CHILD-FALLBACK audit the parser')] }),
    () => ({ calls: [wait()] }),
  ], { 'CHILD-FALLBACK': answer });
  const { world, model } = await codexWorld(respond);
  const { socket, killDaemons } = fallbackSocket(world.tmp);
  try {
    // No daemon started by the test: the server's client starts one where the rule says.
    const run = await world.exec('delegate the audit', {
      model, env: { HANDOFF_SOCKET: null, HANDOFF_AUTOSTART: '1', XDG_STATE_HOME: path.join(world.dir, 'state'), XDG_CACHE_HOME: path.join(world.dir, 'cache') },
    });
    assert.equal(run.code, 0, run.stderr);
    const [bounded] = seen.outputs[1];
    assert.match(bounded, /finding 0001 /);
    assert.match(bounded, /VERDICT: ship it/);
    assert.match(bounded, /\[Truncated: 171,016 bytes/);
    assert.equal(fs.statSync(path.dirname(socket)).mode & 0o777, 0o700, 'the fallback directory is private');
    assert.ok(daemonsServing(socket).length > 0, `a handoffd serves ${socket}`);
  } finally {
    killDaemons();
    await model.close();
    await world.close();
  }
});

test('handoffd unavailable (none runs, none may start): subagent_wait still gives the 171 KB answer\'s head and verdict within Codex\'s cut, one line names the private copy, and the footer\'s commands give back the omitted lines', async () => {
  const answer = longAnswer(3001, 57);
  const { respond, seen } = script([
    () => ({ calls: [spawn('CHILD-DOWN audit the parser')] }),
    () => ({ calls: [wait()] }),
    ([bounded]) => ({ calls: footerCommands(bounded).map(shell) }),
    (outputs) => ({ calls: outputs.flatMap((o) => footerCommands(shellOutput(o))).map(shell) }),
    () => ({ calls: [wait()] }),
  ], { 'CHILD-DOWN': answer });
  const { world, model } = await codexWorld(respond);
  try {
    const run = await world.exec('delegate the audit', { model, env: { HANDOFF_AUTOSTART: '0' } });
    assert.equal(run.code, 0, run.stderr);
    assert.match(seen.outputs[0][0], /Started subagent cx-[0-9a-f]{6}/);
    const [bounded] = seen.outputs[1];
    console.log(`handoffd unavailable: the wait gave ${bytes(bounded)} bytes of a ${bytes(answer)}-byte answer`);
    assert.ok(bytes(bounded) <= CODEX_MCP_WHOLE + 100, `the wait's output is ${bytes(bounded)} bytes`);
    assert.doesNotMatch(bounded, /tokens truncated/, 'Codex did not cut it again');
    assert.match(bounded, /Subagent cx-[0-9a-f]{6} "CHILD-DOWN audit the parser" finished\./);
    assert.match(bounded, /finding 0001 /);
    assert.match(bounded, /VERDICT: ship it/);
    const note = /\[handoff: handoff's daemon was not reached \(.+\); the head and tail above were cut by the hook itself, the full text \(171,016 bytes\) is in (\/\S+)\]/.exec(bounded);
    assert.ok(note, bounded.slice(-1500));
    const copy = note[1];
    assert.equal(fs.readFileSync(copy, 'utf8'), answer, 'the private copy is the exact answer');
    assert.equal(fs.statSync(copy).mode & 0o777, 0o600);
    assert.equal(fs.statSync(path.dirname(copy)).mode & 0o777, 0o700);
    assert.ok(copy.startsWith(world.home), `${copy} is under the user's cache`);
    assert.equal(world.artifacts().length, 0, 'nothing in handoffd\'s store');
    // The footer's pages through Codex's own shell give back exactly the omitted lines.
    const commands = footerCommands(bounded);
    assert.ok(commands.length >= 1, bounded.slice(-1500));
    const listed = seen.outputs[2].map(shellOutput);
    const planned = commands.length === 1 && /--plan/.test(commands[0]);
    const pages = (planned ? seen.outputs[3] : seen.outputs[2]).map(shellOutput);
    assertPagesAreOmitted(pages, bounded, answer);
    if (!planned) assert.equal(listed.length, pages.length);
    // Given once: the next wait has nothing more to give.
    const again = seen.outputs.at(-1).at(-1);
    assert.match(again, /No subagent of this thread has a result you have not received/);
  } finally {
    await model.close();
    await world.close();
  }
});

test('handoffd unavailable: four children finishing together share Codex\'s cut in one wait answer, each head and verdict, each full text in its private copy', async () => {
  const answers = {};
  for (const t of ['A', 'B', 'C', 'D']) answers[`CHILD-${t}-`] = longAnswer(700, 58, `${t} `);
  const { respond, seen } = script([
    () => ({ calls: ['A', 'B', 'C', 'D'].map((t) => spawn(`CHILD-${t}- part ${t}`)) }),
    () => ({ calls: [wait()] }),
  ], answers);
  const { world, model } = await codexWorld(respond);
  try {
    const run = await world.exec('delegate four parts', { model, env: { HANDOFF_AUTOSTART: '0' } });
    assert.equal(run.code, 0, run.stderr);
    const [batch] = seen.outputs[1];
    console.log(`handoffd unavailable, four children: one wait answer of ${bytes(batch)} bytes`);
    assert.ok(bytes(batch) <= CODEX_MCP_WHOLE + 100, `the wait's output is ${bytes(batch)} bytes`);
    assert.doesNotMatch(batch, /tokens truncated|no room|Still running/);
    const copies = [...batch.matchAll(/the full text \([\d,]+ bytes\) is in (\/\S+)\]/g)].map((m) => m[1]);
    assert.equal(copies.length, 4, batch);
    for (const t of ['A', 'B', 'C', 'D']) {
      assert.match(batch, new RegExp(`${t} VERDICT: ship it`), `child ${t}'s verdict`);
      assert.match(batch, new RegExp(`${t} finding 0001`), `child ${t}'s head`);
      const copy = copies.find((c) => fs.readFileSync(c, 'utf8') === answers[`CHILD-${t}-`]);
      assert.ok(copy, `child ${t}'s exact text is in one of the copies`);
    }
    assert.equal(world.artifacts().length, 0);
  } finally {
    await model.close();
    await world.close();
  }
});
