// Starting handoffd when nothing answers at its socket (docs/design.md §12),
// the TypeScript twin of client/lib/handoff/daemon_start.hpp: run `handoffd --background`, which
// exits once the detached daemon listens (0) or says why not (3: another handoffd holds the
// socket's lock; it is starting, or finishing an idle exit), then connect. Two clients starting
// it at once end with one daemon; a stale socket is the new daemon's to replace, a live one never.
import { spawn } from "node:child_process";
import { accessSync, constants, statSync } from "node:fs";
import { delimiter, dirname, isAbsolute, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export interface AutostartOptions {
  /** The handoffd to run. */
  daemonPath: string;
  /** From the first failed connect to giving up, ms (default 10000). */
  timeoutMs?: number;
  /** The started daemon's --idle-exit-ms (default 600000: it exits after 10 idle minutes). */
  idleExitMs?: number;
}

const LOCK_HELD_POLL_MS = 10;
const LOCK_HELD_PATIENCE_MS = 500;

function executable(path: string): boolean {
  try {
    if (!statSync(path).isFile()) return false;
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function envMs(value: string | undefined): number | undefined {
  if (value === undefined || !/^\d{1,10}$/.test(value)) return undefined;
  return Number(value);
}

/**
 * How this process starts a daemon: undefined when HANDOFF_AUTOSTART=0 or no handoffd is found.
 * The daemon is $HANDOFF_DAEMON, else PREFIX/bin/handoffd for this package installed as
 * PREFIX/share/handoff/pi (scripts/install.sh), else build/daemon/handoffd of the checkout this
 * package sits in, else the first handoffd on $PATH. HANDOFF_IDLE_EXIT_MS and
 * HANDOFF_AUTOSTART_TIMEOUT_MS override the two times.
 */
export function autostartFromEnvironment(env: NodeJS.ProcessEnv = process.env): AutostartOptions | undefined {
  if (env["HANDOFF_AUTOSTART"] === "0") return undefined;
  const packageRoot = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
  const candidates = [
    env["HANDOFF_DAEMON"],
    resolve(packageRoot, "../../../bin/handoffd"),
    resolve(packageRoot, "../../build/daemon/handoffd"),
    ...(env["PATH"] ?? "").split(delimiter).filter((dir) => isAbsolute(dir)).map((dir) => join(dir, "handoffd")),
  ];
  const daemonPath = candidates.find((path) => path !== undefined && path !== "" && executable(path));
  if (daemonPath === undefined) return undefined;
  const options: AutostartOptions = { daemonPath };
  const idle = envMs(env["HANDOFF_IDLE_EXIT_MS"]);
  if (idle !== undefined) options.idleExitMs = idle;
  const timeout = envMs(env["HANDOFF_AUTOSTART_TIMEOUT_MS"]);
  if (timeout !== undefined) options.timeoutMs = timeout;
  return options;
}

interface StartResult {
  status: number | null;
  said: string;
}

function runBackground(options: AutostartOptions, socketPath: string, timeoutMs: number): Promise<StartResult> {
  return new Promise((resolveResult) => {
    const args = ["--background", `--socket=${socketPath}`, `--idle-exit-ms=${options.idleExitMs ?? 600_000}`];
    const child = spawn(options.daemonPath, args, { stdio: ["ignore", "ignore", "pipe"] });
    let said = "";
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (chunk: string) => {
      if (said.length < 4096) said += chunk;
    });
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      resolveResult({ status: null, said: `${options.daemonPath} did not report within ${timeoutMs} ms` });
    }, timeoutMs);
    child.once("error", (error) => {
      clearTimeout(timer);
      resolveResult({ status: null, said: `cannot run ${options.daemonPath}: ${error.message}` });
    });
    child.once("close", (status) => {
      clearTimeout(timer);
      resolveResult({ status, said: said.trim() });
    });
  });
}

/** A connection error that means nothing listens at the socket (the daemon's to create). */
export function nothingListens(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return code === "ENOENT" || code === "ECONNREFUSED";
}

const starting = new Map<string, Promise<void>>();

/**
 * Starts handoffd for `socketPath` and resolves once `tryConnect` succeeds, within the timeout.
 * Concurrent calls in this process for one socket share one start. `tryConnect` resolves the
 * connection, or rejects with the connect error (nothingListens() telling absence apart).
 */
export async function startAndConnect<T>(
  socketPath: string,
  options: AutostartOptions,
  tryConnect: () => Promise<T>,
): Promise<T> {
  const deadline = Date.now() + (options.timeoutMs ?? 10_000);
  let last = "it did not answer in time";
  while (Date.now() < deadline) {
    let start = starting.get(socketPath);
    if (start === undefined) {
      start = (async () => {
        const result = await runBackground(options, socketPath, Math.max(1, deadline - Date.now()));
        if (result.status === 0) return;
        if (result.status === 3) {
          // Another handoffd holds the socket: it listens soon, or is gone soon.
          throw Object.assign(new Error(result.said), { lockHeld: true });
        }
        throw new Error(result.said !== "" ? result.said : `it exited with status ${result.status}`);
      })().finally(() => starting.delete(socketPath));
      starting.set(socketPath, start);
    }
    try {
      await start;
    } catch (error) {
      if (!(error as { lockHeld?: boolean }).lockHeld) {
        last = error instanceof Error ? error.message : String(error);
        break;
      }
      const patience = Math.min(deadline, Date.now() + LOCK_HELD_PATIENCE_MS);
      while (Date.now() < patience) {
        try {
          return await tryConnect();
        } catch (connectError) {
          if (!nothingListens(connectError)) throw connectError;
        }
        await new Promise((r) => setTimeout(r, LOCK_HELD_POLL_MS));
      }
      continue;
    }
    try {
      return await tryConnect();
    } catch (connectError) {
      if (!nothingListens(connectError)) throw connectError;
      last = `it started but ${socketPath} did not answer`;
    }
  }
  throw new Error(`no handoffd at ${socketPath}, and starting ${options.daemonPath} failed: ${last} (HANDOFF_AUTOSTART=0 turns starting off)`);
}
