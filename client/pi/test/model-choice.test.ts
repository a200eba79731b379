// Checking subagent_spawn's `model` against Pi's model registry (src/model-choice.ts); the real-Pi
// test (real-pi/subagent-lifecycle.test.ts) runs it against Pi's own registry.
import assert from "node:assert/strict";
import { test } from "node:test";

import { chooseModel } from "../src/model-choice.js";

const models = [
  { provider: "anthropic", id: "claude-sonnet-4-5", name: "Claude Sonnet 4.5" },
  { provider: "openrouter", id: "anthropic/claude-sonnet-4-5" },
  { provider: "openrouter", id: "qwen/qwen3-coder" },
  { provider: "openai", id: "gpt-4o" },
  { provider: "local", id: "gpt-4o" },
  { provider: "local/gw", id: "llama-3" },
];

test("known models: provider/id, a bare id on the parent's provider or the one provider that has it, fuzzy like Pi", () => {
  assert.deepEqual(chooseModel("OpenAI/gpt-4o", models, "anthropic"), { provider: "openai", model: "gpt-4o" });
  assert.deepEqual(chooseModel("gpt-4o", models, "local"), { provider: "local", model: "gpt-4o" });
  assert.deepEqual(chooseModel("gpt-4o", models, "anthropic"), { provider: undefined, model: "gpt-4o" });
  assert.deepEqual(chooseModel("qwen/qwen3-coder", models, "anthropic"), { provider: "openrouter", model: "qwen/qwen3-coder" });
  assert.deepEqual(chooseModel("sonnet:high", models, "anthropic"), { provider: "anthropic", model: "sonnet:high" });
});

test("unknown bare ids and providers are refused with close matches and how to list them, as Pi refuses them", () => {
  assert.throws(() => chooseModel("gpt-4p", models, "anthropic"), /no model "gpt-4p"; close matches: local\/gpt-4o, openai\/gpt-4o\. Run `pi --list-models`/);
  assert.throws(() => chooseModel("nope/x", models, "anthropic"), /Pi knows no provider "nope"\. Run `pi --list-models`/);
  assert.throws(() => chooseModel("no-such-model", models, undefined), /no model "no-such-model"\. Run/);
  assert.throws(() => chooseModel("openai/", models, undefined), /no model "openai\/"/);
});

test("a known provider with an id its registry lacks runs as a custom model id, as `pi --model` does, with a note", () => {
  const choice = chooseModel("openai/gpt-5x:high", models, "anthropic");
  assert.equal(choice.provider, "openai");
  assert.equal(choice.model, "gpt-5x:high");
  assert.equal(
    choice.note,
    'Pi\'s model registry has no model "gpt-5x" for provider "openai": the child runs it as a custom model id with thinking level high, as ' +
      "`pi --model openai/gpt-5x:high` does (close matches: openai/gpt-4o). If that is a typo, cancel the child and spawn it again with a listed model.",
  );
  // The named provider's own model wins over another provider's id that is the whole text.
  assert.deepEqual(chooseModel("openrouter/qwen3-coder", models, "anthropic"), { provider: "openrouter", model: "qwen3-coder" });
  assert.deepEqual(chooseModel("anthropic/claude-sonnet-4-5", models, "openai"), { provider: "anthropic", model: "claude-sonnet-4-5" });
});

test("thinking levels are Pi 1.6.0's, case-sensitive as Pi's check is", () => {
  assert.deepEqual(chooseModel("openai/gpt-4o:max", models, "anthropic"), { provider: "openai", model: "gpt-4o:max" });
  assert.deepEqual(chooseModel("claude-sonnet-4-5:max", models, "openai"), { provider: "anthropic", model: "claude-sonnet-4-5:max" });
  // ":HIGH" is no level to Pi: part of the id, which no model has.
  assert.throws(() => chooseModel("gpt-4o:HIGH", models, "openai"), /no model "gpt-4o:HIGH"/);
});

test("a provider id holding a slash is matched whole, the longest known prefix first, as Pi splits it", () => {
  assert.deepEqual(chooseModel("local/gw/llama-3", models, "anthropic"), { provider: "local/gw", model: "llama-3" });
  const custom = chooseModel("local/gw/llama-9", models, "anthropic");
  assert.equal(custom.provider, "local/gw");
  assert.equal(custom.model, "llama-9");
  assert.match(custom.note ?? "", /no model "llama-9" for provider "local\/gw"/);
  // "local/gpt-4o" is still provider "local" and its model.
  assert.deepEqual(chooseModel("local/gpt-4o", models, "anthropic"), { provider: "local", model: "gpt-4o" });
});
