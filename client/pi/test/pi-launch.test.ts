// How a child Pi is started (src/pi-launch.ts): on Node, and as a Bun-compiled binary with and
// without a `node` on PATH. The real-Pi tests run the Node case end to end.
import assert from "node:assert/strict";
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";

import { piLaunch } from "../src/pi-launch.js";

test("Pi on Node runs `node cli.js` under the guard on that Node; a compiled Pi runs itself, guarded by the node on PATH if any", () => {
  const node = { execPath: "/usr/bin/node22", argv1: "/opt/pi/cli.js", bun: false, path: "" };
  assert.deepEqual(piLaunch(node, undefined), { pi: ["/usr/bin/node22", "/opt/pi/cli.js"], guardNode: "/usr/bin/node22" });
  assert.deepEqual(piLaunch(node, "/other/cli.js"), { pi: ["/usr/bin/node22", "/other/cli.js"], guardNode: "/usr/bin/node22" });
  assert.throws(() => piLaunch({ ...node, argv1: undefined }, undefined), /process\.argv\[1\] is unset/);

  const bin = mkdtempSync(join(tmpdir(), "pi-launch-"));
  try {
    writeFileSync(join(bin, "node"), "#!/bin/sh\n");
    chmodSync(join(bin, "node"), 0o755);
    const compiled = { execPath: "/usr/local/bin/pi", argv1: "/$bunfs/root/pi", bun: true, path: `/nonexistent:${bin}` };
    assert.deepEqual(piLaunch(compiled, undefined), { pi: ["/usr/local/bin/pi"], guardNode: join(bin, "node") });
    assert.deepEqual(piLaunch(compiled, "/opt/pi/cli.js"), { pi: [join(bin, "node"), "/opt/pi/cli.js"], guardNode: join(bin, "node") });
    const noNode = { ...compiled, path: "/nonexistent" };
    assert.deepEqual(piLaunch(noNode, undefined), { pi: ["/usr/local/bin/pi"], guardNode: undefined });
    assert.throws(() => piLaunch(noNode, "/opt/pi/cli.js"), /needs a `node` on PATH/);
  } finally {
    rmSync(bin, { recursive: true, force: true });
  }
});
