// handoff inside a real Claude Code 2.1.328: `handoff setup claude-code`, then `claude -p` on a
// scripted Anthropic model whose parent calls Agent; the hook bounds the child's answer, and the
// scripted parent follows the footer through Claude Code's own Read and Bash.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { test } from 'node:test';

import { World, longAnswer, footerCalls, planCalls, readLines } from './harness.mjs';
import { startModel, firstUserText, toolResults } from './scripted-anthropic.mjs';

const KiB = 1024;
const bytes = (s) => Buffer.byteLength(s, 'utf8');

// A parent that calls Agent with `agents` (prompts), records each tool result, then makes the
// footer's calls of the first cut result (when `follow`), then ends. Children answer by prompt.
function parentScript({ agents, answers, follow = false, usage = {}, background = false }) {
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
    // Tool results may come back in another order than the calls: they are matched by id.
    const toolCalls = (calls) => {
      round++;
      return calls.map((c, i) => ({
        id: `toolu_follow_${round}_${i}`,
        ...(c.tool === 'Read'
          ? { name: 'Read', input: { file_path: seen.artifact, offset: c.offset, limit: c.limit } }
          : { name: 'Bash', input: { command: c.command, description: 'read omitted text back' } }),
      }));
    };
    const inOrder = (results) => [...results.keys()].sort((a, b) => Number(a.split('_').pop()) - Number(b.split('_').pop())).map((k) => results.get(k));
    if (phase === 1 && results.size > 0) {
      seen.agentResults = [...results.values()];
      phase = 2;
      const cut = seen.agentResults.find((r) => r.text.includes('[Truncated: '));
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
      const plan = inOrder(results)[0];
      seen.planOutput = plan.text;
      seen.followCalls = planCalls(plan.text);
      phase = 2;
      return { usage, tools: toolCalls(seen.followCalls) };
    }
    if (phase === 2 && results.size > 0) {
      seen.followResults = inOrder(results);
      if (process.env.SHOW) { console.log([...results.keys()]); console.log(JSON.stringify(req.messages.slice(-3)).slice(0, 3000)); }
      phase = 3;
    }
    return { text: 'done' };
  };
  return { respond, seen };
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
    const model = await startModel(respond);
    try {
      const run = await world.claude(model.url);
      assert.equal(run.code, 0, run.stderr + run.stdout);
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
      // Every call the footer names came back whole, none refused, and together they are the
      // omitted lines.
      if (process.env.SHOW) console.log(result.slice(0, 400), "\n...\n", result.slice(-900));
      const omitted = result.match(/omitted lines (\d+)-(\d+) (?:in|back)/);
      assert.ok(omitted, 'the footer names the omitted lines');
      assert.ok(seen.followCalls.length > 0);
      assert.equal(seen.followResults?.length, seen.followCalls.length);
      const got = [];
      seen.followCalls.forEach((call, i) => {
        const r = seen.followResults[i];
        assert.equal(r.isError, false, `call ${i + 1} was refused: ${r.text.slice(0, 300)}`);
        assert.equal(call.tool, 'Read');
        if (process.env.SHOW) console.log(JSON.stringify(r.text.slice(0, 300)), JSON.stringify(r.text.slice(-400)));
        const lines = readLines(r.text, call.offset, call.limit);
        assert.equal(lines.length, call.limit, `Read offset=${call.offset} limit=${call.limit} returned ${lines.length} lines`);
        got.push(...lines);
      });
      const all = answer.split('\n');
      assert.deepEqual(got, all.slice(Number(omitted[1]) - 1, Number(omitted[2])));
    } finally {
      await model.close();
    }
  });
});
