// handoff inside a real Claude Code 2.1.332 (and 2.1.328: claude_code_real_previous): `handoff setup claude-code`, then `claude -p` on a
// scripted Anthropic model whose parent calls Agent; the hook bounds the child's answer, and the
// scripted parent follows the footer through Claude Code's own Read and Bash.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

import { World, handoffdPath, longAnswer, footerCalls, planCalls, readLines, assertFollowed, followToolCalls, inCallOrder } from './harness.mjs';
import { startModel, firstUserText, toolResults } from './scripted-anthropic.mjs';
import { daemonsServing, loadScaled, fallbackSocket } from '../support/world.mjs';

const KiB = 1024;
const bytes = (s) => Buffer.byteLength(s, 'utf8');


// A parent that calls Agent with `agents` (prompts), records each tool result, then makes the
// footer's calls of the first cut result (when `follow`), then ends. Children answer by prompt.
// `background`: the calls' run_in_background; null (the default) leaves the field out, as models
// usually do, and then Claude Code runs the agent in the background, in `claude -p` too.
// With `jumpTo` (a heading's title), the parent instead reads that heading's line from the
// outline of the omitted middle and makes the one Read its entry names.
function parentScript({ agents, answers, follow = false, jumpTo, usage = {}, background = null }) {
  const seen = { agentResults: undefined, followResults: undefined, followCalls: [], artifact: undefined };
  let phase = 0;
  let round = 0;  // names each round of the parent's tool calls (ids must be unique)
  const respond = async (req) => {
    const first = firstUserText(req);
    for (const [key, answer] of Object.entries(answers)) if (first.includes(key)) return { text: answer };
    if (!req.tools?.length) return { text: 'ok' };  // Claude Code's own side requests (titles...)
    const results = toolResults(req);
    if (phase === 0) {
      phase = 1;
      return {
        usage,
        tools: agents.map((prompt, i) => ({
          name: 'Agent',
          input: {
            description: `agent ${i + 1}`, prompt, subagent_type: 'general-purpose',
            ...(background === null ? {} : { run_in_background: background }),
          },
        })),
      };
    }
    const toolCalls = (calls) => followToolCalls(calls, seen.artifact, ++round);
    if (phase === 1 && results.size > 0) {
      seen.agentResults = [...results.values()];
      phase = 2;
      const cut = seen.agentResults.find((r) => r.text.includes('[Truncated: '));
      if (jumpTo && cut) {
        // Claude Code indents the report by two spaces, the outline's entries by two more.
        const entry = cut.text.match(new RegExp(`\\n {4}(\\d+) #+ ${jumpTo}\\]?\\n`));
        seen.artifact = footerCalls(cut.text).artifact;
        if (!entry) return { text: 'done' };
        seen.followCalls = [{ tool: 'Read', offset: Number(entry[1]), limit: 3 }];
        return { usage, tools: toolCalls(seen.followCalls) };
      }
      if (follow && cut) {
        const { calls, artifact } = footerCalls(cut.text);
        seen.artifact = artifact;
        if (calls.length === 1 && calls[0].tool === 'Bash' && calls[0].command.includes(' --plan ')) {
          seen.planCommand = calls[0].command;  // the calls are listed by the plan command
          phase = 1.5;
          return { usage, tools: toolCalls(calls) };
        }
        seen.followCalls = calls;
        return { usage, tools: toolCalls(calls) };
      }
      return { text: 'done' };
    }
    if (phase === 1.5 && results.size > 0) {
      const plan = inCallOrder(results)[0];
      seen.planOutput = plan.text;
      seen.followCalls = planCalls(plan.text);
      phase = 2;
      return { usage, tools: toolCalls(seen.followCalls) };
    }
    if (phase === 2 && results.size > 0) {
      seen.followResults = inCallOrder(results);
      phase = 3;
    }
    return { text: 'done' };
  };
  return { respond, seen };
}

// Runs `claude -p` in `world` on a scripted model answering with `respond`; it must exit 0.
async function runClaude(world, respond, options = {}) {
  const model = await startModel(respond);
  try {
    const run = await world.claude(model.url, options);
    assert.equal(run.code, 0, run.stderr + run.stdout);
    return run;
  } finally {
    await model.close();
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

test('a foreground Agent answering 171 KB: at most 16 KiB with its first and last lines, and every footer call returns the omitted lines exactly', async () => {
  await withWorld(async (world) => {
    await world.startDaemon();
    world.setup();
    assert.match(world.setup(), /already has handoff's entries/);  // twice = once
    const answer = longAnswer(3001, 57);
    assert.equal(bytes(answer), 171016);
    const { respond, seen } = parentScript({ agents: ['CHILD-LONG audit the parser'], answers: { 'CHILD-LONG': answer }, follow: true });
    const run = await runClaude(world, respond);
    assert.equal(seen.agentResults?.length, 1);
    const result = seen.agentResults[0].text;
    assert.ok(bytes(result) <= 16 * KiB, `the parent's tool result is ${bytes(result)} bytes`);
    assert.match(result, /finding 0001 x+/);
    assert.match(result, /VERDICT: ship it/);
    assert.match(result, /\[\.\.\. middle omitted: lines \d+-\d+ of 3001/);
    assert.match(result, /\[Truncated: 171,016 bytes \/ 3001 lines in full/);
    // The artifact holds the answer byte for byte.
    assert.ok(seen.artifact, 'the footer names the artifact');
    assert.equal(fs.readFileSync(seen.artifact, 'utf8'), answer);
    assertFollowed(seen, answer, result);
  });
});

test('a sectioned answer: the outline of the omitted middle names the line of its "Root cause" section, and one Read there returns it', async () => {
  await withWorld(async (world) => {
    await world.startDaemon();
    world.setup();
    const lines = ['# Audit of the parser'];
    for (let section = 1; section <= 30; section++) {
      lines.push('', section === 17 ? '## Root cause' : `## Section ${section}`, '');
      for (let i = 0; i < 60; i++) lines.push(`finding ${section}.${i}: the tokenizer reads past the buffer end on input ${i}`);
    }
    lines.push('', 'VERDICT: ship it');
    const answer = lines.join('\n');
    const rootCause = lines.indexOf('## Root cause') + 1;
    const { respond, seen } = parentScript({ agents: ['CHILD-SECTIONS audit the parser'], answers: { 'CHILD-SECTIONS': answer }, jumpTo: 'Root cause' });
    await runClaude(world, respond);
    const result = seen.agentResults[0].text;
    assert.ok(bytes(result) <= 16 * KiB, `the parent's tool result is ${bytes(result)} bytes`);
    assert.match(result, /\[Omitted sections, at their lines of the full text \(Read offset=LINE\):/);
    assert.match(result, /VERDICT: ship it/);
    assert.deepEqual(seen.followCalls, [{ tool: 'Read', offset: rootCause, limit: 3 }], 'the outline names the section\'s line');
    assert.equal(seen.followResults?.[0]?.isError, false);
    assert.deepEqual(readLines(seen.followResults[0].text, rootCause, 3), ['## Root cause', '', 'finding 17.0: the tokenizer reads past the buffer end on input 0']);
  });
});

test('a short answer passes byte for byte inside Claude Code\'s own framing, and makes no artifact', async () => {
  await withWorld(async (world) => {
    await world.startDaemon();
    world.setup();
    const answer = longAnswer(40, 60, 'short ');
    const { respond, seen } = parentScript({ agents: ['CHILD-SHORT look'], answers: { 'CHILD-SHORT': answer } });
    const run = await runClaude(world, respond);
    const result = seen.agentResults[0].text;
    // Claude Code indents every line of the report by two spaces.
    assert.ok(result.includes(answer.split('\n').map((l) => `  ${l}`).join('\n')), result.slice(0, 500));
    assert.doesNotMatch(result, /Truncated|handoff/);
    assert.deepEqual(world.artifacts(), []);
  });
});

test('four parallel 40 KB agents share one budget: together within 48 KiB, each with its first and last lines', async () => {
  await withWorld(async (world) => {
    await world.startDaemon();
    world.setup();
    const answers = {};
    const prompts = [];
    for (const tag of ['A', 'B', 'C', 'D']) {
      answers[`CHILD-${tag}-`] = longAnswer(700, 58, `${tag} `);
      prompts.push(`CHILD-${tag}- part ${tag}`);
    }
    for (const a of Object.values(answers)) assert.ok(bytes(a) > 40_000 && bytes(a) < 41 * KiB);
    const { respond, seen } = parentScript({ agents: prompts, answers });
    const run = await runClaude(world, respond);
    assert.equal(seen.agentResults.length, 4);
    const total = seen.agentResults.reduce((n, r) => n + bytes(r.text), 0);
    assert.ok(total <= 48 * KiB, `the four results are ${total} bytes together`);
    for (const tag of ['A', 'B', 'C', 'D']) {
      const r = seen.agentResults.find((x) => x.text.includes(`${tag} finding 0001`));
      assert.ok(r, `agent ${tag}'s result has its first line`);
      assert.match(r.text, new RegExp(`${tag} VERDICT: ship it`));
      assert.match(r.text, /\[Truncated: /);
    }
  });
});

test('a parent whose context is 95% full gets a smaller result; with no context window known the static caps hold', async () => {
  await withWorld(async (world) => {
    await world.startDaemon();
    world.setup();
    const answer = longAnswer(3001, 57);
    const sizes = {};
    for (const [name, env, usage] of [
      ['full', { CLAUDE_CODE_MAX_CONTEXT_TOKENS: '100000', DISABLE_AUTO_COMPACT: '1' }, { input_tokens: 95_000 }],
      ['unknown', {}, { input_tokens: 95_000 }],
    ]) {
      const { respond, seen } = parentScript({ agents: [`CHILD-${name} go`], answers: { [`CHILD-${name}`]: answer }, usage });
      const run = await runClaude(world, respond, { env });
      sizes[name] = bytes(seen.agentResults[0].text);
      assert.match(seen.agentResults[0].text, /VERDICT: ship it/);
    }
    // 95,000 of 100,000 tokens: half the 5,000 left, at 4 bytes a token, is 10,000 bytes.
    assert.ok(sizes.full <= 10_000 + 1024, `95% full: ${sizes.full} bytes`);
    assert.ok(sizes.unknown > 14_000 && sizes.unknown <= 16 * KiB, `no window: ${sizes.unknown} bytes`);
  });
});

test('handoffd stopped keeps head and verdict: the hook cuts the answer itself within 16 KiB, one line names a private copy of it, within seconds', async () => {
  await withWorld(async (world) => {
    world.setup();  // no daemon at the socket
    const answer = longAnswer(500, 60);  // 30 KB: Claude Code itself passes up to 50,000 characters whole
    const { respond, seen } = parentScript({ agents: ['CHILD-NODAEMON go'], answers: { 'CHILD-NODAEMON': answer } });
    const cache = path.join(world.dir, 'cache');
    const run = await runClaude(world, respond, { env: { XDG_CACHE_HOME: cache } });
    const result = seen.agentResults[0].text;
    assert.ok(bytes(result) <= 16 * KiB, `${bytes(result)} bytes`);
    assert.match(result, /finding 0001/, 'the head');
    assert.match(result, /VERDICT: ship it/, 'the verdict');
    const note = /\[handoff: handoff's daemon was not reached \(.+\); the head and tail above were cut by the hook itself, the full text \([\d,]+ bytes\) is in (\S+)\]/.exec(result);
    assert.ok(note, result.slice(-600));
    assert.equal(result.match(/\[handoff: /g).length, 1, 'one line');
    assert.equal(path.dirname(note[1]), path.join(cache, 'handoff', 'unbounded'));
    assert.equal(fs.readFileSync(note[1], 'utf8'), answer, 'the named file holds the full text byte for byte');
    assert.equal(fs.statSync(note[1]).mode & 0o777, 0o600);
    assert.equal(world.artifacts().length, 0, 'nothing in the store: handoffd owns it');
    // No wait on a daemon that is not there: the whole run well within 30 s (loaded: scaled).
    assert.ok(run.ms < loadScaled(30_000), `claude -p took ${run.ms} ms`);
  });
});

test('no daemon running: the hook starts handoffd itself, detached (claude -p ends at once), and the 171 KB answer is bounded', async () => {
  await withWorld(async (world) => {
    // The started daemon takes a user's defaults: the store under XDG_CACHE_HOME, the queue and
    // its log under XDG_STATE_HOME; nothing under PI_CODING_AGENT_DIR, this user has no Pi.
    world.artifactDir = path.join(world.dir, 'cache', 'handoff', 'results');
    world.setup();
    const answer = longAnswer(3001, 57);
    const { respond, seen } = parentScript({ agents: ['CHILD-AUTO audit'], answers: { 'CHILD-AUTO': answer } });
    const env = {
      HANDOFF_AUTOSTART: '1', HANDOFF_DAEMON: handoffdPath,
      PI_CODING_AGENT_DIR: path.join(world.dir, 'agent'), XDG_STATE_HOME: path.join(world.dir, 'state'),
      XDG_CACHE_HOME: path.join(world.dir, 'cache'),
    };
    try {
      const run = await runClaude(world, respond, { env });
      const result = seen.agentResults[0].text;
      assert.ok(bytes(result) <= 16 * KiB, `${bytes(result)} bytes`);
      assert.match(result, /finding 0001/);
      assert.match(result, /VERDICT: ship it/);
      assert.match(result, /\[Truncated: /);
      assert.equal(world.artifacts().length, 1, 'the full text is in the store the Read rule allows');
      assert.ok(!fs.existsSync(path.join(world.dir, 'agent')), 'no Pi directory made');
      // claude -p waits for its hooks' output to end: a daemon holding the hook's stdout would
      // have kept it running until the daemon's idle exit.
      assert.ok(run.ms < 60_000, `claude -p took ${run.ms} ms`);
      const log = fs.readFileSync(path.join(world.dir, 'state', 'handoff', 'handoffd.log'), 'utf8');
      assert.match(log, new RegExp(`listening on ${world.socket}`));
      assert.ok(daemonsServing(world.socket).length > 0, 'the started daemon still serves after claude -p ended');
    } finally {
      for (const pid of daemonsServing(world.socket)) process.kill(pid, 'SIGKILL');
    }
  });
});

test('a shell with neither XDG_RUNTIME_DIR nor HANDOFF_SOCKET (root in a container, a CI runner): the hook starts handoffd on the private fallback, ${TMPDIR}/handoff-UID/handoffd.sock, and the 171 KB answer is bounded', async () => {
  await withWorld(async (world) => {
    world.artifactDir = path.join(world.dir, 'cache', 'handoff', 'results');
    world.setup();
    const tmp = path.join(world.dir, 'tmp');
    fs.mkdirSync(tmp, { mode: 0o1777 });
    const { socket, killDaemons } = fallbackSocket(tmp);
    const answer = longAnswer(3001, 57);
    const { respond, seen } = parentScript({ agents: ['CHILD-FALLBACK audit'], answers: { 'CHILD-FALLBACK': answer } });
    const env = {
      HANDOFF_SOCKET: null, XDG_RUNTIME_DIR: null, TMPDIR: tmp, HANDOFF_AUTOSTART: '1', HANDOFF_DAEMON: handoffdPath,
      XDG_STATE_HOME: path.join(world.dir, 'state'), XDG_CACHE_HOME: path.join(world.dir, 'cache'),
    };
    try {
      await runClaude(world, respond, { env });
      const result = seen.agentResults[0].text;
      assert.ok(bytes(result) <= 16 * KiB, `${bytes(result)} bytes`);
      assert.match(result, /finding 0001/);
      assert.match(result, /VERDICT: ship it/);
      assert.match(result, /\[Truncated: 171,016 bytes/);
      assert.equal(fs.statSync(path.dirname(socket)).mode & 0o777, 0o700, 'the fallback directory is private');
      assert.ok(daemonsServing(socket).length > 0, `a handoffd serves ${socket}`);
    } finally {
      killDaemons();
    }
  });
});

test('setup: a malformed settings file is refused and left untouched; --remove takes out exactly handoff\'s entries', async () => {
  await withWorld(async (world) => {
    const settings = `${world.home}/.claude/settings.json`;
    fs.mkdirSync(`${world.home}/.claude`, { recursive: true });
    fs.writeFileSync(settings, '{"model": "x", hooks: }');
    assert.throws(() => world.setup(), /not valid JSON/);
    assert.equal(fs.readFileSync(settings, 'utf8'), '{"model": "x", hooks: }');
    for (const event of ['PostToolUse', 'PreToolUse', 'SubagentStop', 'UserPromptSubmit']) {
      const odd = JSON.stringify({ hooks: { [event]: { matcher: 'x' } } });
      fs.writeFileSync(settings, odd);
      assert.throws(() => world.setup(), new RegExp(`"hooks\\.${event}" is not an array`));
      assert.equal(fs.readFileSync(settings, 'utf8'), odd);
    }
    const mine = { model: 'x', hooks: { PostToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: 'echo hi' }] }] }, permissions: { allow: ['Bash(ls:*)'] } };
    fs.writeFileSync(settings, JSON.stringify(mine, null, 2));
    world.setup();
    const installed = JSON.parse(fs.readFileSync(settings, 'utf8'));
    assert.equal(installed.hooks.PostToolUse.length, 2);
    assert.equal(installed.hooks.PostToolUse[0].matcher, 'Bash', 'the user\'s own entry stays first');
    assert.equal(installed.hooks.PreToolUse.length, 1);
    assert.equal(installed.hooks.SubagentStop.length, 1);
    assert.equal(installed.hooks.UserPromptSubmit[0].hooks.length, 2);
    assert.equal(installed.hooks.UserPromptSubmit[0].hooks[1].asyncRewake, true);
    assert.match(installed.hooks.UserPromptSubmit[0].hooks[1].command, / hook claude-code --deliver$/);
    assert.ok(installed.permissions.allow.includes(`Read(/${world.artifactDir}/**)`));
    assert.match(world.setup('--remove', '--dry-run'), /would write/);
    world.setup('--remove');
    assert.deepEqual(JSON.parse(fs.readFileSync(settings, 'utf8')), mine);
  });
});

test('setup over an older install: its entries are replaced where they stood, the --foreground-agents one goes, and --remove leaves the user\'s own', async () => {
  await withWorld(async (world) => {
    const settings = `${world.home}/.claude/settings.json`;
    fs.mkdirSync(`${world.home}/.claude`, { recursive: true });
    const old = "'/old/prefix/bin/handoff' hook claude-code";
    const user = { matcher: 'Bash', hooks: [{ type: 'command', command: 'echo mine' }] };
    fs.writeFileSync(settings, JSON.stringify({
      hooks: {
        PostToolUse: [{ matcher: 'Agent', hooks: [{ type: 'command', command: old, timeout: 1800 }] }, user],
        PreToolUse: [user, { matcher: 'Agent', hooks: [{ type: 'command', command: old, timeout: 1800 }] }],
      },
    }, null, 2));
    world.setup();
    const now = JSON.parse(fs.readFileSync(settings, 'utf8'));
    assert.equal(now.hooks.PostToolUse.length, 2);
    assert.equal(now.hooks.PostToolUse[0].matcher, 'Agent', 'handoff\'s group where the old one stood');
    assert.ok(!JSON.stringify(now).includes('/old/prefix/'), 'no entry of the old install is left');
    assert.deepEqual(now.hooks.PostToolUse[1], user);
    assert.deepEqual(now.hooks.PreToolUse.map((g) => g.matcher), ['Bash', 'Agent|SubagentHandback']);
    assert.equal(now.hooks.UserPromptSubmit[0].hooks.filter((h) => / hook claude-code( --deliver)?$/.test(h.command)).length, 2);
    world.setup('--remove');
    assert.deepEqual(JSON.parse(fs.readFileSync(settings, 'utf8')), { hooks: { PostToolUse: [user], PreToolUse: [user] } });
  });
});

for (const background of [true, false]) {
  test(`claude -p, an Agent call with run_in_background: ${background}: run in the foreground, where its 171 KB answer is bounded, and the run ends normally`, async () => {
    await withWorld(async (world) => {
      await world.startDaemon();
      world.setup();
      const answer = longAnswer(3001, 57);
      const { respond, seen } = parentScript({ agents: ['CHILD-BG go'], answers: { 'CHILD-BG': answer }, background });
      const run = await runClaude(world, respond);
      const result = seen.agentResults[0].text;
      assert.ok(bytes(result) <= 16 * KiB, `${bytes(result)} bytes`);
      assert.match(result, /finding 0001/);
      assert.match(result, /VERDICT: ship it/);
      assert.match(result, /\[Truncated: 171,016 bytes/);
      assert.doesNotMatch(result, /Async agent launched/);
      assert.equal(run.result?.is_error, false);
      assert.equal(run.result?.result, 'done');
    });
  });
}

test('claude -p without handoff: an Agent call with no run_in_background runs in the background, and the parent gets Claude Code\'s 99 KB notice (what the tests above keep from happening)', async () => {
  await withWorld(async (world) => {
    const answer = longAnswer(3001, 57);
    const notices = [];
    const { respond: parent, seen } = parentScript({ agents: ['CHILD-PLAIN go'], answers: { 'CHILD-PLAIN': answer } });
    const respond = async (req) => {
      const text = JSON.stringify(req.messages ?? []);
      if (text.includes('<task-notification>') && !firstUserText(req).includes('CHILD-')) notices.push(req);
      return parent(req);
    };
    await runClaude(world, respond);
    assert.match(seen.agentResults[0].text, /Async agent launched/);
    assert.ok(notices.length > 0, 'the report came as a <task-notification>');
  });
});
