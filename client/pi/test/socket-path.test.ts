// Where the TypeScript client finds handoffd (src/socket-path.ts) against where the C++ side does
// (protocol/socket_location.hpp, printed by tests/support/wire_description --socket) in the same
// environments; and the private fallback's directory made 0700, or refused with the reason when
// it is a symlink, open to others or another user's, nothing made through it.
import { execFileSync } from "node:child_process";
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import assert from "node:assert/strict";
import { afterEach, test } from "node:test";

import { ChildSessions } from "../src/child-sessions.js";
import { HandoffError } from "../src/errors.js";
import { clientSocketLocation, daemonSocketLocation, defaultSocketPath } from "../src/socket-path.js";

/** $HANDOFF_WIRE_DESCRIPTION (set by the CTest registration), else next to $HANDOFFD's build. */
function wireDescription(): string {
  const daemon = process.env["HANDOFFD"] ?? resolve(import.meta.dirname, "../../../../build/daemon/handoffd");
  const tool = process.env["HANDOFF_WIRE_DESCRIPTION"] ?? resolve(dirname(daemon), "../tests/support/wire_description");
  if (!existsSync(tool)) throw new Error(`wire_description not found at ${tool}: build it, or set HANDOFF_WIRE_DESCRIPTION`);
  return tool;
}

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) {
    // A directory given away to nobody is still ours to remove as root.
    rmSync(dir, { recursive: true, force: true });
  }
});
function scratch(): string {
  const dir = mkdtempSync(join(tmpdir(), "handoff-socket-path-test-"));
  dirs.push(dir);
  return dir;
}

const uid = process.geteuid?.();
const own = `handoff-${uid}`;

test("the TypeScript rule is the C++ one: HANDOFF_SOCKET, XDG_RUNTIME_DIR, the private fallback", () => {
  const environments: NodeJS.ProcessEnv[] = [
    { HANDOFF_SOCKET: "/srv/explicit.sock", XDG_RUNTIME_DIR: "/run/user/4242", TMPDIR: "/var/tmp" },
    { HANDOFF_SOCKET: "relative.sock" },
    { HANDOFF_SOCKET: "", XDG_RUNTIME_DIR: "/run/user/4242" },
    { XDG_RUNTIME_DIR: "/run/user//4242/" },
    { XDG_RUNTIME_DIR: "run/user/4242", TMPDIR: "/var/tmp" },
    { XDG_RUNTIME_DIR: "" },
    { TMPDIR: "/var//tmp/" },
    { TMPDIR: "/var/tmp/../tmp" },
    { TMPDIR: "tmp" },
    { TMP: "/elsewhere", TEMP: "/elsewhere" },  // os.tmpdir() would read these; neither side does
    {},
  ];
  const tool = wireDescription();
  for (const env of environments) {
    const cpp = JSON.parse(execFileSync(tool, ["--socket"], { encoding: "utf8", env: { PATH: process.env["PATH"], ...env } })) as unknown;
    assert.deepEqual({ client: clientSocketLocation(env), daemon: daemonSocketLocation(env) }, cpp, JSON.stringify(env));
  }
  assert.deepEqual(clientSocketLocation({}), { path: `/tmp/${own}/handoffd.sock`, source: "private_fallback" });
});

test("defaultSocketPath makes the private fallback's directory 0700 and returns the socket in it", () => {
  const tmp = scratch();
  assert.equal(defaultSocketPath({ TMPDIR: tmp }), join(tmp, own, "handoffd.sock"));
  assert.ok(statSync(join(tmp, own)).isDirectory());
  assert.equal(statSync(join(tmp, own)).mode & 0o7777, 0o700);
  assert.equal(defaultSocketPath({ TMPDIR: tmp }), join(tmp, own, "handoffd.sock"));  // found fit again
  // The other rules touch nothing.
  assert.equal(defaultSocketPath({ XDG_RUNTIME_DIR: join(tmp, "run") }), join(tmp, "run", "handoff", "handoffd.sock"));
  assert.equal(existsSync(join(tmp, "run")), false);
});

function refusal(tmp: string): HandoffError {
  try {
    defaultSocketPath({ TMPDIR: tmp });
  } catch (error) {
    assert.ok(error instanceof HandoffError);
    assert.equal(error.kind, "not-connected");
    assert.match(error.message, /because neither HANDOFF_SOCKET nor XDG_RUNTIME_DIR is set/);
    return error;
  }
  assert.fail("an unsafe fallback directory was accepted");
}

test("a symlink at the fallback directory is refused and nothing is made through it, for the socket or the Pi sessions", () => {
  const tmp = scratch();
  const elsewhere = join(tmp, "elsewhere");
  mkdirSync(elsewhere, { mode: 0o700 });
  symlinkSync(elsewhere, join(tmp, own));
  assert.match(refusal(tmp).message, new RegExp(`^the socket directory ${join(tmp, own)} is a symlink; handoff does not follow one there`));
  const saved = process.env["TMPDIR"];
  const savedRuntime = process.env["XDG_RUNTIME_DIR"];
  process.env["TMPDIR"] = tmp;
  delete process.env["XDG_RUNTIME_DIR"];
  try {
    assert.throws(() => new ChildSessions(join(tmp, own, "pi-sessions")).create("sa-000001"), / is a symlink/);
  } finally {
    if (saved === undefined) delete process.env["TMPDIR"];
    else process.env["TMPDIR"] = saved;
    if (savedRuntime !== undefined) process.env["XDG_RUNTIME_DIR"] = savedRuntime;
  }
  assert.deepEqual(readdirSync(elsewhere), []);
});

test("a fallback directory open to others is refused, and left as it was", () => {
  const tmp = scratch();
  mkdirSync(join(tmp, own));
  chmodSync(join(tmp, own), 0o777);
  assert.match(refusal(tmp).message, new RegExp(`is mode 0777, open to other users; it must be 0700 \\(chmod 700 ${join(tmp, own)}\\)`));
  assert.equal(statSync(join(tmp, own)).mode & 0o7777, 0o777);
  assert.deepEqual(readdirSync(join(tmp, own)), []);
});

test("another user's fallback directory is refused (as root: one given to nobody)", (t) => {
  if (uid !== 0) {
    t.skip("giving a directory away takes root");
    return;
  }
  const tmp = scratch();
  mkdirSync(join(tmp, own), { mode: 0o700 });
  chownSync(join(tmp, own), 65534, 65534);
  assert.match(refusal(tmp).message, /belongs to uid 65534, not to uid 0 that handoff runs as/);
});
