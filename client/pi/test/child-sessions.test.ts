// Where children's Pi sessions are kept (child-sessions.ts): private directories, a 0600 file,
// removal; a root open to others, or not a directory, is refused with the reason.
import assert from "node:assert/strict";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, test } from "node:test";

import { ChildSessions, defaultSessionRoot, SESSION_FILE } from "../src/child-sessions.js";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
function scratch(): string {
  const dir = mkdtempSync(join(tmpdir(), "handoff-sessions-test-"));
  dirs.push(dir);
  return dir;
}
const mode = (path: string): number => statSync(path).mode & 0o777;

test("the root: $XDG_RUNTIME_DIR/handoff/pi-sessions, else in the socket's private fallback, per user", () => {
  assert.equal(defaultSessionRoot({ XDG_RUNTIME_DIR: "/run/user/1000" }), "/run/user/1000/handoff/pi-sessions");
  assert.equal(defaultSessionRoot({ TMPDIR: "/var/tmp" }), `/var/tmp/handoff-${process.geteuid?.()}/pi-sessions`);
  assert.equal(defaultSessionRoot({}), `/tmp/handoff-${process.geteuid?.()}/pi-sessions`);
});

test("a child's session: an empty 0600 file in a 0700 directory in the parent's 0700 directory; removed with the child, and all with the parent", () => {
  const root = join(scratch(), "a", "pi-sessions");
  const sessions = new ChildSessions(root);
  const file = sessions.create("sa-000001");
  const other = sessions.create("sa-000002");
  assert.equal(mode(root), 0o700);
  assert.equal(mode(dirname(dirname(file))), 0o700);
  assert.match(readdirSync(root)[0] ?? "", new RegExp(`^${process.pid}-`));
  assert.equal(mode(dirname(file)), 0o700);
  assert.equal(mode(file), 0o600);
  assert.equal(statSync(file).size, 0);
  assert.equal(file, join(dirname(file), SESSION_FILE));
  assert.throws(() => sessions.create("sa-000001"), /EEXIST/);
  sessions.remove("sa-000001");
  assert.equal(existsSync(dirname(file)), false);
  assert.equal(existsSync(other), true);
  sessions.removeAll();
  assert.deepEqual(readdirSync(root), []);
});

test("a root open to others, or a file, is refused with the reason", () => {
  const open = join(scratch(), "open");
  new ChildSessions(open).create("sa-1");  // creates it 0700
  chmodSync(open, 0o755);
  assert.throws(() => new ChildSessions(open).create("sa-2"), { message: `${open} is open to other users (mode 755; expected 700)` });
  const file = join(scratch(), "file");
  writeFileSync(file, "");
  assert.throws(() => new ChildSessions(file).create("sa-3"), /EEXIST|not a directory/);
});

test("the directories of parents that no longer run are removed when a parent makes its own; a running parent's are kept", () => {
  const root = join(scratch(), "pi-sessions");
  mkdirSync(root, { recursive: true, mode: 0o700 });
  const dead = join(root, "999999999-abc123");  // above any pid_max: no such process
  const live = join(root, `${process.ppid}-def456`);
  const other = join(root, "not-a-parent");
  for (const dir of [dead, live, other]) mkdirSync(join(dir, "sa-1"), { recursive: true });
  new ChildSessions(root).create("sa-2");
  assert.equal(existsSync(dead), false);
  assert.equal(existsSync(live), true);
  assert.equal(existsSync(other), true);
});
