// The adapter is type-checked against the real Pi package's .d.ts by the build itself (`npm test`
// runs tsc first; `npm run typecheck` alone). This shows those types have teeth: misusing Pi's
// API in a fixture is rejected under the same compiler settings.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";

import { packageRoot } from "./support/daemon.js";

const tsc = join(packageRoot, "node_modules", "typescript", "bin", "tsc");

function runTsc(project: string): { status: number | null; output: string } {
  const run = spawnSync(process.execPath, [tsc, "-p", project, "--noEmit", "--pretty", "false"], { encoding: "utf8" });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

test("misusing Pi's API is a type error (the types are Pi's, not any)", () => {
  const dir = join(packageRoot, "dist", "typecheck-fixture");
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, "tsconfig.json"),
    JSON.stringify({ extends: "../../tsconfig.json", compilerOptions: { rootDir: "../.." }, include: ["fixture.ts"], exclude: [] }),
  );
  writeFileSync(
    join(dir, "fixture.ts"),
    [
      'import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";',
      'import { createHandoffAdapter } from "../../src/pi-adapter.js";',
      "export default function (pi: ExtensionAPI): void {",
      "  createHandoffAdapter(pi);",
      '  pi.sendMessage({ customType: "x", content: "y", display: true }, { deliverAs: "followup", triggerTurn: true });',
      '  pi.on("agent_setled", () => undefined);',
      "  createHandoffAdapter({ on: pi.on.bind(pi) });",
      "}",
      "",
    ].join("\n"),
  );
  const { status, output } = runTsc(join(dir, "tsconfig.json"));
  assert.notEqual(status, 0);
  const errors = output.split("\n").filter((line) => line.includes("error TS"));
  assert.equal(errors.length, 3, output);
  assert.match(errors[0] ?? "", /fixture\.ts\(5,.*TS2820.*"followup"/, "deliverAs is checked");
  assert.match(errors[1] ?? "", /fixture\.ts\(6,.*TS2769/, "event names are checked");
  assert.match(errors[2] ?? "", /fixture\.ts\(7,.*TS2345/, "the adapter takes Pi's API");
  assert.match(output, /Property 'sendMessage' is missing/, "and needs its sendMessage");
  rmSync(dir, { recursive: true, force: true });
});
