// The subagent tools' settings (subagent-options.ts): options over environment over defaults; a
// malformed environment value is an error naming the variable and the range.
import assert from "node:assert/strict";
import { test } from "node:test";

import { DEFAULT_KEEP_MS, resolveSubagentOptions } from "../src/subagent-options.js";

test("how long an idle child's conversation is kept: 1 h by default, HANDOFF_SUBAGENT_KEEP_MS, the option first", () => {
  assert.equal(DEFAULT_KEEP_MS, 3_600_000);
  assert.equal(resolveSubagentOptions({}, {}).keepMs, 3_600_000);
  assert.equal(resolveSubagentOptions({}, { HANDOFF_SUBAGENT_KEEP_MS: "5000" }).keepMs, 5_000);
  assert.equal(resolveSubagentOptions({ keepMs: 7 }, { HANDOFF_SUBAGENT_KEEP_MS: "5000" }).keepMs, 7);
  assert.equal(resolveSubagentOptions({ sessionRoot: "/r" }, {}).sessionRoot, "/r");
  for (const bad of ["0", "-1", "1.5", "soon", String(8 * 24 * 3600 * 1000)])
    assert.throws(() => resolveSubagentOptions({}, { HANDOFF_SUBAGENT_KEEP_MS: bad }), {
      message: `HANDOFF_SUBAGENT_KEEP_MS=${JSON.stringify(bad)}: expected an integer from 1 to 604800000`,
    });
});
