// `handoff setup codex` read back by the real Codex CLI 0.169.0: what `codex mcp get/list --json`
// makes of the config.toml it wrote (command, args, env, env_vars, timeouts), beside a server
// Codex itself added, and that `--remove` gives back the file as it was. The byte-level edits:
// tests/cli/cli_codex_setup_test.cpp.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

import { World, codexPath, cliPath } from './harness.mjs';
import { startModel, offeredTools } from './scripted-responses.mjs';

const handoffPath = fs.realpathSync(cliPath);  // setup writes its own /proc/self/exe
const passedEnv = ['XDG_RUNTIME_DIR', 'XDG_STATE_HOME', 'XDG_CACHE_HOME', 'HANDOFF_SOCKET', 'HANDOFF_AUTOSTART',
  'HANDOFF_CODEX', 'HANDOFF_CODEX_MAX_RUNNING', 'HANDOFF_CODEX_TURN_TIMEOUT_S', 'HANDOFF_CODEX_OUTPUT_BYTES', 'OPENAI_API_KEY'];

function setup(world, ...args) {
  return execFileSync(cliPath, ['setup', 'codex', ...args], { env: world.env(), encoding: 'utf8', timeout: 30_000 });
}

function codex(world, ...args) {
  return execFileSync(codexPath, args, { env: world.env(), encoding: 'utf8', timeout: 60_000, stdio: ['ignore', 'pipe', 'pipe'] });
}

const servers = (world) => JSON.parse(codex(world, 'mcp', 'list', '--json'));

test('Codex reads handoff\'s server as setup wrote it: command, args, env, env_vars, timeouts', async () => {
  const world = new World();
  try {
    fs.rmSync(world.codexHome, { recursive: true });  // setup makes it
    assert.match(setup(world), /setup codex: wrote handoff's entries to .*config\.toml/);
    const entry = JSON.parse(codex(world, 'mcp', 'get', 'handoff', '--json'));
    assert.equal(entry.name, 'handoff');
    assert.equal(entry.enabled, true);
    assert.deepEqual(entry.transport, {
      type: 'stdio', command: handoffPath, args: ['mcp'], env: { CODEX_HOME: world.codexHome }, env_vars: passedEnv, cwd: null,
    });
    assert.equal(entry.startup_timeout_sec, 20);
    assert.equal(entry.tool_timeout_sec, 86400);
  } finally {
    await world.close();
  }
});

test('beside Codex\'s own settings (CRLF, comments, a provider, a server `codex mcp add` wrote), and taken out exactly', async () => {
  const world = new World();
  try {
    const before = [
      '# my Codex',
      'model = "gpt-5"',
      'model_provider = "azure"',
      '',
      '[model_providers.azure]',
      'name = "Azure"',
      'base_url = "http://127.0.0.1:9/openai"',
      'env_key = "AZURE_OPENAI_API_KEY"  # read from the environment',
      'wire_api = "responses"',
      '',
    ].join('\r\n');
    fs.writeFileSync(world.configPath(), before);
    setup(world);
    let list = servers(world);
    assert.deepEqual(list.map((s) => s.name), ['handoff']);
    assert.deepEqual(list[0].transport.env_vars, [...passedEnv, 'AZURE_OPENAI_API_KEY']);
    assert.ok(fs.readFileSync(world.configPath(), 'utf8').startsWith(before + '\r\n[mcp_servers.handoff]\r\n'));

    // Codex rewrites every server when it adds one (handoff's `env` as a sub-table, the
    // timeouts as floats, LF line ends): the same server, so setup leaves it as it is.
    codex(world, 'mcp', 'add', 'docs', '--env', 'A=1', '--', '/usr/bin/docs-server', '--stdio');
    list = servers(world);
    assert.deepEqual(list.map((s) => s.name).sort(), ['docs', 'handoff']);
    assert.equal(list.find((s) => s.name === 'handoff').transport.command, handoffPath);
    const rewritten = fs.readFileSync(world.configPath(), 'utf8');
    assert.match(rewritten, /\n\[mcp_servers\.handoff\.env\]\n/);
    // Codex keeps the lines setup marked as its own: --remove finds them again.
    assert.match(rewritten, /\[features\]  # added by handoff setup codex\nmulti_agent = false  # added by handoff setup codex\n/);
    assert.match(setup(world), /already has handoff's entries; nothing to change/);
    assert.equal(fs.readFileSync(world.configPath(), 'utf8'), rewritten);

    // --remove takes out both of handoff's tables as Codex wrote them, and nothing else.
    assert.match(setup(world, '--remove'), /removed handoff's entries/);
    assert.deepEqual(servers(world).map((s) => s.name), ['docs']);
    assert.equal(fs.readFileSync(world.configPath(), 'utf8'),
                 rewritten.replace(/\[mcp_servers\.handoff\]\n[\s\S]*?\n\n(?=\[mcp_servers\.docs\])/, '')
                   .replace(/\n\[features\]  # added by handoff setup codex\n[\s\S]*$/, ''));
    assert.doesNotMatch(fs.readFileSync(world.configPath(), 'utf8'), /handoff/);
  } finally {
    await world.close();
  }
});

test('TOML 1.1 as Codex reads it (an inline table over lines, \\e, a time without seconds), and --remove gives back its bytes', async () => {
  const world = new World();
  try {
    const before = [
      'model = "gpt-5"', 'x = "\\e[1m\\x41"', 'at = 07:32', '',
      '[mcp_servers.docs]', 'command = "docs"', 'env = {', '  A = "1",  # a comment', '}', '', '# the end', '',
    ].join('\n');
    fs.writeFileSync(world.configPath(), before);
    setup(world);
    assert.deepEqual(servers(world).map((s) => s.name).sort(), ['docs', 'handoff']);
    setup(world, '--remove');
    assert.equal(fs.readFileSync(world.configPath(), 'utf8'), before);
    assert.deepEqual(servers(world).map((s) => s.name), ['docs']);
  } finally {
    await world.close();
  }
});

// What a catalog model (multi-agent v2, code mode) is offered in its first request, after setup
// and after `setup --keep-native-agents`: Codex's own `collaboration` tools, or not; handoff's
// tools listed as a deferred namespace either way.
for (const model of ['gpt-6.1-sol', 'scripted-1']) {
  test(`${model}: after setup the first request offers none of Codex's own subagent tools, and handoff's; --keep-native-agents gives them back`, async () => {
    const offered = {};
    for (const keep of [false, true]) {
      const world = new World();
      const scripted = await startModel(async () => ({ text: 'done' }));
      try {
        world.configure(scripted.baseUrl, { model });
        const said = setup(world, ...(keep ? ['--keep-native-agents'] : []));
        assert.match(said, keep ? /subagent tools stay on/ : /subagent tools are off/);
        const run = await world.exec('hello', { model: scripted, env: { HANDOFF_AUTOSTART: '0' } });
        assert.equal(run.code, 0, run.stderr);
        const first = run.requests[0];
        const names = offeredTools(first).map((t) => (t.namespace ? `${t.namespace}.` : '') + t.name);
        const developer = JSON.stringify((first.input ?? []).filter((i) => i.role === 'developer'));
        offered[keep] = { names, developer };
      } finally {
        await scripted.close();
        await world.close();
      }
    }
    const native = /^(collaboration|multi_agent_v1)\./;
    assert.deepEqual(offered[false].names.filter((n) => native.test(n)), [], offered[false].names.join(' '));
    assert.ok(offered[true].names.some((n) => native.test(n)), offered[true].names.join(' '));
    if (model === 'gpt-6.1-sol') {
      // Code mode: MCP tools are deferred, each server listed by its description cut at 250
      // characters; handoff's makes its point within them.
      for (const keep of [false, true]) {
        const listed = offered[keep].developer.match(/Deferred tool namespaces:\\n- mcp__handoff: (.*?)\\n/);
        assert.ok(listed, offered[keep].developer.slice(0, 2000));
        // Whole: no "..." where Codex cut it at 250 characters.
        assert.match(listed[1], /subagent_spawn starts a Codex subagent, .*Delegate with them, not spawn_agent \/ wait_agent\.$/);
      }
      assert.doesNotMatch(offered[false].developer, /multi_agent_role/);
    } else {
      assert.ok(offered[false].names.includes('mcp__handoff.subagent_spawn'), offered[false].names.join(' '));
    }
  });
}
