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
    'Pi\'s model registry has no model "gpt-5x:high" for provider "openai": the child runs it as a custom model id, as ' +
      "`pi --model openai/gpt-5x:high` does (close matches: openai/gpt-4o). If that is a typo, cancel the child and spawn it again with a listed model.",
  );
  // A bare id of another provider that has the whole text still wins, as in Pi's own lookup.
  assert.deepEqual(chooseModel("openrouter/qwen3-coder", models, "anthropic"), { provider: "openrouter", model: "qwen3-coder" });
  assert.deepEqual(chooseModel("anthropic/claude-sonnet-4-5", models, "openai"), { provider: "anthropic", model: "claude-sonnet-4-5" });
});
