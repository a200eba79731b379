// handoff's subagentStop hook (`handoff setup copilot`) inside a real GitHub Copilot CLI 1.0.102,
// headless (`copilot -p --allow-all --output-format json`) on a scripted Chat Completions model:
// what the parent model receives for a task (a subagent) is what the scripted model records in
// its next request, and the footer's calls are run by Copilot's own view and bash.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { test } from 'node:test';

import { World, cliPath, longAnswer } from './harness.mjs';
import { parentScript, promptHas, startModel } from '../support/scripted-chat.mjs';

const KiB = 1024;
const copilotCut = 20 * KiB;  // Copilot replaces a tool output over 20,480 bytes with a 500-character preview
const bytes = (s) => Buffer.byteLength(s, 'utf8');
const task = (prompt, description = prompt.slice(0, 20), extra = {}) =>
  ({ name: 'task', arguments: { description, prompt, agent_type: 'general-purpose', name: description.replace(/\W/g, '').slice(0, 12), ...extra } });

// The parent's script (../support/scripted-chat.mjs parentScript); a child's marker is followed
// by a space in its prompt (CHILD-A is not CHILD-AB).
const script = (steps, answers) => parentScript(steps, answers, { markerEnd: ' ' });

function setup(world, args = []) {
  const store = args.includes('--remove') ? [] : ['--artifact-dir', world.artifactDir];
  return execFileSync(cliPath, ['setup', 'copilot', ...store, ...args], { env: world.env(), encoding: 'utf8', timeout: 30_000 });
}

async function copilotWorld(respond, { install = true, daemon = true } = {}) {
  const world = new World();
  const model = await startModel(respond);
  if (install) setup(world);
  if (daemon) await world.startDaemon();
  return { world, model };
}

// The footer of a bounded text: the full text's path and its view calls.
function footer(text) {
  const full = /Full text: (\/\S+?\.txt)/.exec(text)?.[1];
  const views = [...text.matchAll(/view view_range=\[(\d+),(\d+)\]/g)].map((m) => [Number(m[1]), Number(m[2])]);
  return { full, views };
}

// The view calls a footer names, as Copilot tool calls.
const viewCalls = (text) => {
  const { full, views } = footer(text);
  return { calls: views.map((range) => ({ name: 'view', arguments: { path: full, view_range: range } })) };
};

// Every view output gives back exactly its range's lines of `full`, and together exactly the
// omitted lines the footer names.
function checkPages(bounded, outputs, full) {
  const { views } = footer(bounded);
  const all = full.split('\n');
  assert.ok(views.length > 0, bounded.slice(-600));
  assert.equal(outputs.length, views.length);
  const got = [];
  outputs.forEach((o, i) => {
    assert.equal(o.name, 'view');
    assert.ok(bytes(o.text) <= copilotCut, `page ${i}: ${bytes(o.text)} bytes`);
    const [first, last] = views[i];
    assert.deepEqual(o.text.split('\n'), all.slice(first - 1, last), `page ${i} (${first}-${last})`);
    got.push(...o.text.split('\n'));
  });
  const omitted = /omitted lines (\d+)-(\d+)/.exec(bounded);
  assert.ok(omitted, bounded.slice(-600));
  assert.deepEqual(got, all.slice(Number(omitted[1]) - 1, Number(omitted[2])));
  return views.length;
}

test('a 171,016-byte answer reaches the parent bounded, head and verdict in, and every footer view returns exactly the omitted lines', async () => {
  const answer = longAnswer(3001, 57);
  assert.equal(bytes(answer), 171_016);
  const { respond, seen } = script([
    () => ({ calls: [task('CHILD-LONG audit the parser', 'audit the parser')] }),
    ([bounded]) => viewCalls(bounded.text),
  ], { 'CHILD-LONG': answer });
  const { world, model } = await copilotWorld(respond);
  try {
    const run = await world.copilot('PARENT delegate the audit', { model });
    assert.equal(run.code, 0, run.stderr.slice(-2000));
    const [bounded] = seen[0];
    assert.equal(bounded.name, 'task');
    assert.ok(bytes(bounded.text) <= 16 * KiB, `${bytes(bounded.text)} bytes`);
    assert.ok(bounded.text.startsWith('finding 0001 '), bounded.text.slice(0, 200));
    assert.match(bounded.text, /VERDICT: ship it/, 'the verdict');
    assert.doesNotMatch(bounded.text, /Output too large to read at once/, "not Copilot's own cut");
    const { full } = footer(bounded.text);
    assert.equal(fs.readFileSync(full, 'utf8'), answer, 'the artifact is the exact answer');
    assert.equal(fs.statSync(full).mode & 0o777, 0o600);
    const pages = checkPages(bounded.text, seen[1], answer);
    console.log(`copilot: a ${bytes(answer)}-byte answer reached the parent as ${bytes(bounded.text)} bytes; ${pages} view calls`);
  } finally {
    await model.close();
    await world.close();
  }
});

test('four children of one turn share one budget: 48 KiB in all, each under Copilot\'s cut with its verdict', async () => {
  const answers = Object.fromEntries(['A', 'B', 'C', 'D'].map((t) => [`CHILD-${t}`, longAnswer(700, 57, `${t}-`)]));
  const { respond, seen } = script([
    () => ({ calls: Object.keys(answers).map((m) => task(`${m} review a part`)) }),
  ], answers);
  const { world, model } = await copilotWorld(respond);
  try {
    const run = await world.copilot('PARENT review four parts', { model });
    assert.equal(run.code, 0, run.stderr.slice(-2000));
    const results = seen[0];
    assert.equal(results.length, 4);
    const total = results.reduce((n, r) => n + bytes(r.text), 0);
    const whole = Object.values(answers).reduce((n, a) => n + bytes(a), 0);
    assert.ok(total <= 48 * KiB, `${total} bytes in all`);
    for (const [i, r] of results.entries()) {
      const tag = 'ABCD'[i];
      assert.ok(bytes(r.text) < copilotCut, `${tag}: ${bytes(r.text)} bytes`);
      assert.ok(r.text.startsWith(`${tag}-finding 0001`), r.text.slice(0, 100));
      assert.match(r.text, new RegExp(`${tag}-VERDICT: ship it`));
      assert.match(r.text, /Full text: \//);
    }
    assert.equal(world.artifacts().length, 4, 'each full text in the store');
    console.log(`copilot: four answers of ${whole} bytes reached the parent as ${total} bytes (${results.map((r) => bytes(r.text)).join(', ')})`);
  } finally {
    await model.close();
    await world.close();
  }
});

test('a line longer than a view page is read back through Copilot\'s bash in byte ranges, each exact and under the cut', async () => {
  const lines = longAnswer(1201, 57).split('\n');
  lines[600] = 'L'.repeat(20_000) + '文'.repeat(10_000);  // 50,000 bytes: over a 20,000-byte page
  const answer = lines.join('\n');
  // The footer's calls in order: view pages and bash commands.
  const calls = (text) => [...text.matchAll(/view view_range=\[(\d+),(\d+)\]|bash `([^`]+)`/g)]
    .map((m) => (m[3] ? { bash: m[3] } : { view: [Number(m[1]), Number(m[2])] }));
  const full = (text) => /(?:Full text: |read --reader copilot --plan \d+-\d+ ')(\/\S+?\.txt)/.exec(text)?.[1];
  let path;
  const run = (text) => ({ calls: calls(text).map((c) => (c.bash ? { name: 'bash', arguments: { command: c.bash, description: 'read a range' } }
    : { name: 'view', arguments: { path, view_range: c.view } })) });
  // The footer lists its calls, or (no room for them all) the command that lists them: run it first.
  const plan = (text) => /bash `([^`]+ --plan [^`]+)`/.exec(text)?.[1];
  const { respond, seen } = script([
    () => ({ calls: [task('CHILD-WIDE audit the parser', 'audit the parser')] }),
    ([bounded]) => {
      path = full(bounded.text);
      return plan(bounded.text) ? { calls: [{ name: 'bash', arguments: { command: plan(bounded.text), description: 'list the calls' } }] } : run(bounded.text);
    },
    ([listed]) => (listed.name === 'bash' && /^# The calls/.test(listed.text) ? run(listed.text) : { text: 'done' }),
  ], { 'CHILD-WIDE': answer });
  const { world, model } = await copilotWorld(respond);
  try {
    const run = await world.copilot('PARENT delegate the audit', { model });
    assert.equal(run.code, 0, run.stderr.slice(-2000));
    const [bounded] = seen[0];
    assert.match(bounded.text, /VERDICT: ship it/);
    const listing = plan(bounded.text) ? seen[1][0].text : bounded.text;
    if (plan(bounded.text)) assert.ok(bytes(listing) <= copilotCut, `the plan: ${bytes(listing)} bytes`);
    const steps = calls(listing.replace(/bash `[^`]+ --plan [^`]+`/, ''));
    assert.ok(steps.some((c) => c.bash) && steps.some((c) => c.view), listing.slice(-800));
    const outputs = seen.at(-1);
    assert.equal(outputs.length, steps.length);
    const bytesOf = Buffer.from(answer, 'utf8');
    const lineStarts = [0];
    for (let i = 0; i < bytesOf.length; i++) if (bytesOf[i] === 0x0a) lineStarts.push(i + 1);
    const lineOf = (byte) => lineStarts.findLastIndex((start) => start <= byte) + 1;
    const covered = [];
    steps.forEach((c, i) => {
      const out = outputs[i].text;
      assert.ok(bytes(out) <= copilotCut, `call ${i}: ${bytes(out)} bytes`);
      if (c.view) {
        assert.deepEqual(out.split('\n'), lines.slice(c.view[0] - 1, c.view[1]));
        for (let l = c.view[0]; l <= c.view[1]; l++) covered.push(l);
        return;
      }
      const range = /--bytes (\d+)-(\d+)/.exec(c.bash);
      const [from, to] = [Number(range[1]), Number(range[2])];
      const shell = /^([\s\S]*)\n<shellId: \d+ completed with exit code 0>$/.exec(out);
      assert.ok(shell, out.slice(-200));
      assert.equal(shell[1], bytesOf.subarray(from, to).toString('utf8'), `bytes ${from}-${to}`);
      if (covered.at(-1) !== lineOf(from)) covered.push(lineOf(from));
    });
    const omitted = /omitted lines (\d+)-(\d+)/.exec(bounded.text);
    assert.deepEqual(covered, Array.from({ length: Number(omitted[2]) - Number(omitted[1]) + 1 }, (_, k) => Number(omitted[1]) + k));
    console.log(`copilot: a ${bytes(answer)}-byte answer with a 50,000-byte line: ${bytes(bounded.text)} bytes, ${plan(bounded.text) ? 'the plan command, then ' : ''}${steps.filter((c) => c.view).length} view and ${steps.filter((c) => c.bash).length} bash calls, each exact`);
  } finally {
    await model.close();
    await world.close();
  }
});

test('a child that fails (no subagentStop) is cancelled by the postToolUseFailure hook: its sibling does not wait for it', async () => {
  const answer = longAnswer(700, 57, 'A-');
  const { respond: base, seen } = script([
    () => ({ calls: [task('CHILD-A review a part'), task('CHILD-B review a part')] }),
  ], { 'CHILD-A': answer });
  // Child B's model call fails with an error Copilot does not retry.
  const respond = (request) => (promptHas(request, 'CHILD-B ') ? { status: 400, error: 'bad request for B' } : base(request));
  const { world, model } = await copilotWorld(respond);
  try {
    const run = await world.copilot('PARENT review two parts', { model, timeoutMs: 90_000 });
    assert.equal(run.code, 0, run.stderr.slice(-2000));
    assert.ok(run.ms < 60_000, `${run.ms} ms: the sibling waited for the failed child`);
    const [a, b] = seen[0];
    assert.ok(a.text.startsWith('A-finding 0001'), a.text.slice(0, 100));
    assert.match(a.text, /A-VERDICT: ship it/);
    assert.match(b.text, /bad request for B/);
    // handoffd knew both (A's hook started B as its sibling), and none is left running.
    const status = await world.status();
    assert.equal(status.children.running, 0, JSON.stringify(status));
    assert.equal(Object.values(status.children).reduce((n, k) => n + k, 0), 2, JSON.stringify(status));
  } finally {
    await model.close();
    await world.close();
  }
});

test('a short answer passes byte for byte, with nothing stored', async () => {
  const answer = 'The parser is fine.\n\nVERDICT: ship it';
  const { respond, seen } = script([() => ({ calls: [task('CHILD-SHORT check the parser')] })], { 'CHILD-SHORT': answer });
  const { world, model } = await copilotWorld(respond);
  try {
    const run = await world.copilot('PARENT check', { model });
    assert.equal(run.code, 0, run.stderr.slice(-2000));
    const [r] = seen[0];
    assert.equal(r.text, answer);
    assert.deepEqual(world.artifacts(), []);
  } finally {
    await model.close();
    await world.close();
  }
});

test('handoffd unavailable keeps head and verdict: cut by the hook from a private copy, which one line names and view pages exactly', async () => {
  const answer = longAnswer(3001, 57);
  const { respond, seen } = script([
    () => ({ calls: [task('CHILD-LONG audit')] }),
    ([bounded]) => viewCalls(bounded.text),
  ], { 'CHILD-LONG': answer });
  const { world, model } = await copilotWorld(respond, { daemon: false });
  try {
    const run = await world.copilot('PARENT audit', { model });
    assert.equal(run.code, 0, run.stderr.slice(-2000));
    const [r] = seen[0];
    assert.ok(bytes(r.text) <= 16 * KiB, `${bytes(r.text)} bytes`);
    assert.ok(r.text.startsWith('finding 0001 '), 'the head');
    assert.match(r.text, /VERDICT: ship it/, 'the verdict');
    assert.doesNotMatch(r.text, /Output too large to read at once/, "not Copilot's own head-only cut");
    const lines = r.text.split('\n');
    assert.equal(lines.filter((l) => l.startsWith('[handoff:')).length, 1);
    const note = /^\[handoff: handoff's daemon was not reached \(.+\); the head and tail above were cut by the hook itself, the full text \(171,016 bytes\) is in (\/\S+)\]$/.exec(lines.at(-1));
    assert.ok(note, lines.at(-1));
    assert.equal(note[1], footer(r.text).full, 'the footer names the same copy');
    assert.ok(note[1].startsWith(`${world.cache}/handoff/unbounded/`), note[1]);
    assert.equal(fs.readFileSync(note[1], 'utf8'), answer, 'the private copy is the full text byte for byte');
    assert.equal(fs.statSync(note[1]).mode & 0o777, 0o600);
    assert.deepEqual(world.artifacts(), [], 'nothing in the store: handoffd owns it');
    checkPages(r.text, seen[1], answer);
    console.log(`copilot without handoffd: ${bytes(r.text)} bytes (${lines.at(-1).slice(0, 100)}...)`);
  } finally {
    await model.close();
    await world.close();
  }
});

test('without handoff Copilot gives the parent a head-only preview; setup puts its hook in, and --remove restores the file exactly', async () => {
  const answer = longAnswer(3001, 57);
  const { respond, seen } = script([() => ({ calls: [task('CHILD-LONG audit')] })], { 'CHILD-LONG': answer });
  const { world, model } = await copilotWorld(respond, { install: false });
  try {
    const original = '{\n  "model": "gpt-4.1",\n  "hooks": {\n    "sessionStart": [{"type": "command", "bash": "true"}]\n  }\n}\n';
    fs.writeFileSync(world.settingsPath(), original);
    assert.match(setup(world, ['--dry-run']), /subagentStop/);
    assert.equal(fs.readFileSync(world.settingsPath(), 'utf8'), original, '--dry-run changes nothing');
    setup(world);
    const once = fs.readFileSync(world.settingsPath(), 'utf8');
    setup(world);
    assert.equal(fs.readFileSync(world.settingsPath(), 'utf8'), once, 'installing twice is installing once');
    const hooks = JSON.parse(once).hooks;
    assert.deepEqual(hooks.sessionStart, [{ type: 'command', bash: 'true' }], "the user's hook kept");
    assert.equal(hooks.subagentStop.length, 1);
    assert.ok(hooks.subagentStop[0].bash.endsWith(' hook copilot'), hooks.subagentStop[0].bash);
    assert.equal(hooks.preToolUse.length, 1);
    assert.ok(hooks.preToolUse[0].bash.endsWith(` hook copilot --store '${world.artifactDir}'`), hooks.preToolUse[0].bash);
    setup(world, ['--remove']);
    assert.deepEqual(JSON.parse(fs.readFileSync(world.settingsPath(), 'utf8')), JSON.parse(original), '--remove takes out exactly what setup put in');
    // With the hook gone, Copilot's own cut: a preview of the head, the verdict lost.
    const run = await world.copilot('PARENT audit', { model });
    assert.equal(run.code, 0, run.stderr.slice(-2000));
    const [r] = seen[0];
    assert.match(r.text, /^Output too large to read at once \(167\.0 KB\)\. Saved to: /);
    assert.doesNotMatch(r.text, /VERDICT/);
    assert.ok(bytes(r.text) < 1000, `${bytes(r.text)} bytes`);
    console.log(`copilot without handoff: a ${bytes(answer)}-byte answer reached the parent as ${bytes(r.text)} bytes, head only`);
  } finally {
    await model.close();
    await world.close();
  }
});
