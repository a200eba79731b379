// Where handoffd listens by default: the TypeScript twin of protocol/socket_location.hpp, held
// to it by test/socket-path.test.ts (which runs the C++ rule through tests/support/wire_description).
//
// In the order tried:
//   1. $HANDOFF_SOCKET, as given (clients only)
//   2. $XDG_RUNTIME_DIR/handoff/handoffd.sock: the user's runtime directory, private by the XDG spec
//   3. ${TMPDIR:-/tmp}/handoff-<euid>/handoffd.sock: the private fallback, where no runtime
//      directory exists (root in a container, CI, no systemd user session). tmux's convention:
//      handoff-<euid> is made 0700 when absent and, as it sits in a directory anybody may write
//      to, checked before anything dials in it (preparePrivateDir).
// XDG_RUNTIME_DIR and TMPDIR count only when absolute (a relative one is ignored, as an empty one).
// TMPDIR alone, not os.tmpdir(): that one also reads TMP and TEMP, which the C++ side does not.
import { closeSync, constants, fstatSync, mkdirSync, openSync } from "node:fs";
import { dirname, join } from "node:path";

import { HandoffError } from "./errors.js";

/** Which rule gave the socket (the C++ socket_source, by the same names). */
export type SocketSource = "handoff_socket" | "runtime_dir" | "private_fallback";

export interface SocketLocation {
  /** The socket: normalized, absolute but for a relative HANDOFF_SOCKET. */
  path: string;
  source: SocketSource;
}

/** Linux's O_PATH, which node:fs constants do not name: a descriptor of a name, opened for fstat only. */
const O_PATH = 0o10000000;

function absoluteEnv(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const value = env[name];
  return value !== undefined && value.startsWith("/") ? value : undefined;
}

/**
 * handoff's per-user runtime directory: $XDG_RUNTIME_DIR/handoff, else the private fallback
 * ${TMPDIR:-/tmp}/handoff-<euid> (whose safety preparePrivateDir establishes). From the
 * environment alone: nothing is created or checked.
 */
export function runtimeDirectory(env: NodeJS.ProcessEnv = process.env): { dir: string; fallback: boolean } {
  const runtime = absoluteEnv(env, "XDG_RUNTIME_DIR");
  if (runtime !== undefined) return { dir: join(runtime, "handoff"), fallback: false };
  const uid = process.geteuid?.() ?? process.getuid?.() ?? "user";
  return { dir: join(absoluteEnv(env, "TMPDIR") ?? "/tmp", `handoff-${uid}`), fallback: true };
}

/** Where handoffd binds when not given --socket: rule 2, else rule 3. Nothing is created. */
export function daemonSocketLocation(env: NodeJS.ProcessEnv = process.env): SocketLocation {
  const { dir, fallback } = runtimeDirectory(env);
  return { path: join(dir, "handoffd.sock"), source: fallback ? "private_fallback" : "runtime_dir" };
}

/** Where a client dials when not given a socket: rule 1, else the daemon's. Nothing is created. */
export function clientSocketLocation(env: NodeJS.ProcessEnv = process.env): SocketLocation {
  const named = env["HANDOFF_SOCKET"];
  if (named !== undefined && named !== "") return { path: named, source: "handoff_socket" };
  return daemonSocketLocation(env);
}

/**
 * Makes `dir` fit to hold a socket or other private files: creates it (0700; not its parents)
 * when absent; then it must be a real directory (a symlink there is refused, never followed),
 * owned by the effective uid, with no group or other permission bits. Throws an Error naming
 * `dir`, what is wrong and what to do (the words of the C++ rpc::prepare_socket_dir). Unlike that
 * one, a directory it makes keeps what the umask leaves of 0700: node:fs has no chmod that
 * follows no symlink, and a umask taking the owner's own bits is not one a session runs with.
 */
export function preparePrivateDir(dir: string): void {
  const refuse = (problem: string): never => {
    throw new Error(`the socket directory ${dir} ${problem}`);
  };
  try {
    mkdirSync(dir, { mode: 0o700 });  // not recursive: makes the last name only, follows no symlink there
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") refuse(`cannot be made: ${(error as Error).message}`);
  }
  // One descriptor of the name itself (O_PATH | O_NOFOLLOW opens a symlink, not its target), so
  // that every check is of one and the same thing.
  let fd: number;
  try {
    fd = openSync(dir, constants.O_NOFOLLOW | O_PATH);
  } catch (error) {
    return refuse(`cannot be opened: ${(error as Error).message}`);
  }
  try {
    const stat = fstatSync(fd);
    if (stat.isSymbolicLink()) refuse("is a symlink; handoff does not follow one there (remove it: handoff makes the directory itself)");
    if (!stat.isDirectory()) refuse("exists and is not a directory (move it away)");
    const uid = process.geteuid?.();
    if (uid !== undefined && stat.uid !== uid)
      refuse(`belongs to uid ${stat.uid}, not to uid ${uid} that handoff runs as: another user's socket could stand there (remove the directory, or choose another socket)`);
    if ((stat.mode & 0o077) !== 0)
      refuse(`is mode ${(stat.mode & 0o7777).toString(8).padStart(4, "0")}, open to other users; it must be 0700 (chmod 700 ${dir})`);
  } finally {
    closeSync(fd);
  }
}

/**
 * The socket a client dials: clientSocketLocation(), the private fallback's directory made or
 * checked first. Throws a HandoffError ("not-connected") naming the directory and what is wrong.
 */
export function defaultSocketPath(env: NodeJS.ProcessEnv = process.env): string {
  const where = clientSocketLocation(env);
  if (where.source !== "private_fallback") return where.path;
  try {
    preparePrivateDir(dirname(where.path));
  } catch (error) {
    throw new HandoffError(
      "not-connected",
      `${(error as Error).message}; it holds handoffd's socket because neither HANDOFF_SOCKET nor XDG_RUNTIME_DIR is set (set either, or pass socketPath)`,
    );
  }
  return where.path;
}
