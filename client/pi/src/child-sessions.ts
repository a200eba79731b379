// Where the children's own Pi conversations are kept, so that subagent_send can continue them.
//
// Contract:
// - One directory per parent session, `<root>/<pid>-XXXXXX` (mkdtemp: mode 0700), under a root
//   that must be a directory of this user with no group or other access:
//   `$XDG_RUNTIME_DIR/handoff/pi-sessions`, else `${TMPDIR:-/tmp}/handoff-<uid>/pi-sessions`, in
//   the socket's private fallback directory (socket-path.ts, runtimeDirectory), which is made or
//   checked as for the socket before anything is made in it.
// - One directory per child in it (0700) holding `session.jsonl`, created empty with mode 0600
//   before the child Pi first opens it with `--session FILE --session-dir DIR`. Pi 1.6.0 keeps an
//   existing file's mode: it writes its header into an empty session file with open(O_TRUNC) and
//   appends every entry after it (dist/core/session-manager.js, `_setSessionFile`, `_persist`);
//   a file it had to create itself would be made with the umask's mode instead.
// - `remove(child)` deletes a child's directory; `removeAll()` the parent's whole directory. A
//   failure to create anything throws an Error that names the path and the reason.
// - A parent killed with SIGKILL cannot remove its directory: the first parent directory made
//   under the root removes those of parents whose pid no longer runs (`<pid>-*`, ESRCH).
import { closeSync, lstatSync, mkdirSync, mkdtempSync, openSync, readdirSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";

import { preparePrivateDir, runtimeDirectory } from "./socket-path.js";

/** The file name of a child's session inside its directory. */
export const SESSION_FILE = "session.jsonl";

/** The root for every parent's session directory (see the contract). */
export function defaultSessionRoot(env: NodeJS.ProcessEnv = process.env): string {
  return join(runtimeDirectory(env).dir, "pi-sessions");
}

export class ChildSessions {
  private dir: string | undefined;

  constructor(private readonly root: string = defaultSessionRoot()) {}

  /** Creates the child's private directory and empty session file; returns the file's path. */
  create(childId: string): string {
    const dir = join(this.parentDir(), childId);
    mkdirSync(dir, { mode: 0o700 });
    const file = join(dir, SESSION_FILE);
    closeSync(openSync(file, "wx", 0o600));
    return file;
  }

  /** Deletes a child's directory (nothing when there is none). */
  remove(childId: string): void {
    if (this.dir !== undefined) rmSync(join(this.dir, childId), { recursive: true, force: true });
  }

  /** Deletes this parent's whole directory. */
  removeAll(): void {
    if (this.dir !== undefined) rmSync(this.dir, { recursive: true, force: true });
    this.dir = undefined;
  }

  private parentDir(): string {
    if (this.dir !== undefined) return this.dir;
    // The fallback directory is in one anybody may write to: a symlink or a stranger's directory
    // planted there would otherwise take the root below, made through it.
    const runtime = runtimeDirectory();
    if (runtime.fallback && dirname(this.root) === runtime.dir) preparePrivateDir(runtime.dir);
    mkdirSync(this.root, { recursive: true, mode: 0o700 });
    const stat = lstatSync(this.root);
    const uid = process.getuid?.();
    if (!stat.isDirectory()) throw new Error(`${this.root} is not a directory`);
    if (uid !== undefined && stat.uid !== uid) throw new Error(`${this.root} belongs to uid ${stat.uid}, not to this user (${uid})`);
    if ((stat.mode & 0o077) !== 0) throw new Error(`${this.root} is open to other users (mode ${(stat.mode & 0o777).toString(8)}; expected 700)`);
    removeOrphans(this.root);
    this.dir = mkdtempSync(join(this.root, `${process.pid}-`));
    return this.dir;
  }
}

/** Removes the directories under `root` of parents that no longer run (best effort). */
function removeOrphans(root: string): void {
  for (const name of readdirSync(root)) {
    const pid = Number(/^(\d+)-/.exec(name)?.[1]);
    if (!Number.isSafeInteger(pid) || pid <= 0 || running(pid)) continue;
    try {
      rmSync(join(root, name), { recursive: true, force: true });
    } catch {
      // Another parent removing it too, or something we may not touch: left as it is.
    }
  }
}

function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== "ESRCH";
  }
}
