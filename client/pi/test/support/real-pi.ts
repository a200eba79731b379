// A real Pi process in RPC mode, for tests: Pi 1.6.0 run by Node 22 (scripts/node22.sh), on a
// scripted model (scripted-model.ts) declared in a temporary models.json, with extensions loaded
// by `-e` (default: this package) and HANDOFF_SOCKET pointing at the test's daemon.
//
// Commands go to stdin as JSON lines; stdout is read as JSON events split on "\n" only (Pi's
// records may hold U+2028, which readline would split on). `close()` kills Pi's whole process
// group (Pi and anything it spawned), so a test leaves no process behind; a test process that
// ends without closing one (a test timed out) kills its group as it exits.
//
// Starting waits for Pi's first answer for as long as Pi is working towards it, not for a fixed
// time: Pi loads its extensions before it reads a command, and the first load of a TypeScript
// extension in a checkout (pi-subagents: 278 files, 4.5 MB) is compiled by jiti into a cache keyed
// by the file's path (/tmp/jiti), which takes 30-40 s on a loaded machine and about 1 s warm.
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

import { packageRoot } from "./daemon.js";
import type { ScriptedModel } from "./scripted-model.js";

/** Pi 1.6.0's CLI entry point as installed by `npm ci` in client/pi. */
export const defaultPiCli = resolve(packageRoot, "node_modules/@earendil-works/pi-coding-agent/dist/bundle/cli.js");

export const scriptedProvider = "scripted";
export const scriptedModelId = "scripted-model";

let node22: string | undefined;

/** Node 22 for Pi: $HANDOFF_NODE22, else what scripts/node22.sh prints (installing it once). */
export function node22Path(): string {
  node22 ??= process.env["HANDOFF_NODE22"] ?? execFileSync(resolve(packageRoot, "../../scripts/node22.sh"), { encoding: "utf8" }).trim();
  return node22;
}

export interface RealPiOptions {
  model: ScriptedModel;
  /** HANDOFF_SOCKET for the extension (the test daemon's socket). */
  socketPath?: string;
  /** `-e` arguments, in order (default: [client/pi]). */
  extensions?: string[];
  /** Extensions loaded after the default ones. */
  extraExtensions?: string[];
  /** The Pi CLI script run by Node 22 (default: `defaultPiCli`). */
  piCli?: string;
  /** The model's context window, tokens (default 200000). */
  contextWindow?: number;
  /** Working directory (default: a fresh temporary directory). */
  cwd?: string;
  /** Extra environment (merged over the defaults). */
  env?: Record<string, string>;
  /** Extra CLI arguments. */
  args?: string[];
  /**
   * Load extensions as a user's Pi does, from its settings (no `-ne`, no `-e`): what `prepare`
   * wrote there (`handoff setup pi`, say).
   */
  fromSettings?: boolean;
  /** Runs once the directories exist, before Pi starts; what it returns is added to Pi's environment. */
  prepare?: (paths: { dir: string; home: string; agentDir: string; cwd: string }) => Record<string, string> | void;
}

/** One JSON record from Pi's stdout (an event or a command's response). */
export type PiEvent = { type: string; [key: string]: unknown };

const RECENT_EVENTS_SHOWN = 15;

/** A start fails when Pi neither answered nor used any CPU time for this long, ms. */
const START_STALL_MS = 30_000;

/** Pis started and not closed yet: killed when the test process exits (a test that timed out). */
const running = new Set<RealPi>();
process.once("exit", () => {
  for (const pi of running) {
    process.stderr.write(`Pi ${pi.pid} was still open as the test process exited${pi.awaiting()}\n${pi.recent()}\n`);
    if (pi.pid > 0) killGroup(pi.pid);
  }
});

export class RealPi {
  /** Every record received, in order. */
  readonly events: PiEvent[] = [];
  readonly home: string;
  readonly agentDir: string;
  readonly cwd: string;
  private stderrText = "";
  private buffered = "";
  private nextId = 0;
  private readonly waiters = new Set<() => void>();
  /** What the waits under way are waiting for (for the report of a Pi closed in the middle). */
  private readonly awaited: string[] = [];
  private exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;

  private constructor(
    private readonly child: ChildProcess,
    readonly dir: string,
  ) {
    this.home = join(dir, "home");
    this.agentDir = join(dir, "agent");
    this.cwd = join(dir, "cwd");
    child.stdout?.setEncoding("utf8");
    child.stdout?.on("data", (text: string) => this.onStdout(text));
    child.stderr?.setEncoding("utf8");
    child.stderr?.on("data", (text: string) => {
      this.stderrText = (this.stderrText + text).slice(-20_000);
    });
    child.once("exit", (code, signal) => {
      this.exit = { code, signal };
      this.wake();
    });
  }

  /** Starts Pi and waits until it answers `get_state`. */
  static async start(options: RealPiOptions): Promise<RealPi> {
    const dir = mkdtempSync(join(tmpdir(), "handoff-pi-"));
    const home = join(dir, "home");
    const agentDir = join(dir, "agent");
    const cwd = options.cwd ?? join(dir, "cwd");
    for (const path of [home, agentDir, cwd]) mkdirSync(path, { recursive: true });
    writeFileSync(join(agentDir, "models.json"), JSON.stringify(modelsJson(options.model.baseUrl, options.contextWindow ?? 200_000), null, 2));
    const prepared = options.prepare?.({ dir, home, agentDir, cwd }) ?? {};
    const extensions = options.fromSettings ? [] : [...(options.extensions ?? [packageRoot]), ...(options.extraExtensions ?? [])];
    const args = [
      options.piCli ?? defaultPiCli,
      "--mode", "rpc", "--no-session", "--offline",
      ...(options.fromSettings ? [] : ["-ne"]),
      ...extensions.flatMap((path) => ["-e", path]),
      "--provider", scriptedProvider, "--model", scriptedModelId,
      ...(options.args ?? []),
    ];
    const env: Record<string, string> = {
      PATH: process.env["PATH"] ?? "/usr/bin:/bin",
      HOME: home,
      PI_CODING_AGENT_DIR: agentDir,
      PI_OFFLINE: "1",
      PI_SKIP_VERSION_CHECK: "1",
      PI_TELEMETRY: "0",
      // A test that wants the extension to start handoffd says so (HANDOFF_AUTOSTART: "1").
      HANDOFF_AUTOSTART: "0",
      ...(options.socketPath === undefined ? {} : { HANDOFF_SOCKET: options.socketPath }),
      ...options.env,
      ...prepared,
    };
    // detached: Pi leads a process group of its own, so close() can end it with all it spawned.
    const child = spawn(node22Path(), args, { cwd, env, stdio: ["pipe", "pipe", "pipe"], detached: true });
    const pi = new RealPi(child, dir);
    running.add(pi);
    try {
      await pi.firstAnswer();
    } catch (error) {
      await pi.close();
      throw error;
    }
    return pi;
  }

  get pid(): number {
    return this.child.pid ?? -1;
  }

  get stderr(): string {
    return this.stderrText;
  }

  /** Sends a command and resolves with its `response` record (rejects when `success` is false). */
  async command(command: { type: string; [key: string]: unknown }, timeoutMs = 10_000): Promise<PiEvent> {
    const id = `t${++this.nextId}`;
    this.send({ ...command, id });
    const response = await this.waitFor((event) => event.type === "response" && event["id"] === id, timeoutMs, `response to ${command.type}`);
    if (response["success"] !== true) throw new Error(`Pi refused ${command.type}: ${String(response["error"])}`);
    return response;
  }

  /** `prompt`: resolves once Pi accepted it (the run goes on; await its events). */
  prompt(message: string): Promise<PiEvent> {
    return this.command({ type: "prompt", message });
  }

  abort(): Promise<PiEvent> {
    return this.command({ type: "abort" });
  }

  /** `get_state`'s data (sessionId, isStreaming, model...). */
  async state(): Promise<Record<string, unknown>> {
    const response = await this.command({ type: "get_state" });
    return response["data"] as Record<string, unknown>;
  }

  /** Writes one JSON line to Pi's stdin. */
  send(record: unknown): void {
    this.child.stdin?.write(`${JSON.stringify(record)}\n`);
  }

  /** Writes one JSON line to Pi's stdin; resolves once it is in the kernel's buffer (read by Pi or not). */
  sendFlushed(record: unknown): Promise<void> {
    return new Promise((done, fail) => {
      const stdin = this.child.stdin;
      if (stdin === null) return fail(new Error("Pi's stdin is closed"));
      stdin.write(`${JSON.stringify(record)}\n`, (error) => (error ? fail(error) : done()));
    });
  }

  /**
   * The first event from index `from` on that matches, waiting up to `timeoutMs`. The error names
   * what was awaited and lists the recent events and Pi's stderr.
   */
  async waitFor(match: (event: PiEvent) => boolean, timeoutMs = 20_000, what = "an event", from = 0): Promise<PiEvent> {
    const deadline = Date.now() + timeoutMs;
    return this.next(match, what, from, () => (Date.now() >= deadline ? `timed out after ${timeoutMs} ms` : Math.max(0, deadline - Date.now())));
  }

  /**
   * The answer to a `get_state` sent as Pi starts, waited for while Pi uses CPU time (loading and
   * compiling its extensions); it fails when Pi exits, or stalls for START_STALL_MS without answering.
   */
  private async firstAnswer(): Promise<void> {
    const id = `t${++this.nextId}`;
    this.send({ type: "get_state", id });
    let cpu = cpuTicks(this.pid);
    let workedAt = Date.now();
    const stalled = (): string | number => {
      const now = cpuTicks(this.pid);
      if (now !== cpu) [cpu, workedAt] = [now, Date.now()];
      const idle = Date.now() - workedAt;
      return idle >= START_STALL_MS ? `Pi used no CPU time for ${idle} ms and did not answer` : 1_000;  // look again in a second
    };
    const response = await this.next((event) => event.type === "response" && event["id"] === id, "its first answer (get_state)", 0, stalled);
    if (response["success"] !== true) throw new Error(`Pi refused get_state: ${String(response["error"])}`);
  }

  /**
   * The first event from `from` on that matches. `giveUp` is asked whenever nothing matched yet:
   * a reason to fail, or how long to wait for the next event before asking again, ms.
   */
  private async next(match: (event: PiEvent) => boolean, what: string, from: number, giveUp: () => string | number): Promise<PiEvent> {
    this.awaited.push(what);
    try {
      return await this.nextUntracked(match, what, from, giveUp);
    } finally {
      this.awaited.splice(this.awaited.indexOf(what), 1);
    }
  }

  private async nextUntracked(match: (event: PiEvent) => boolean, what: string, from: number, giveUp: () => string | number): Promise<PiEvent> {
    for (let seen = from; ; ) {
      for (; seen < this.events.length; seen += 1) {
        const event = this.events[seen] as PiEvent;
        if (match(event)) return event;
      }
      if (this.exit !== undefined) throw new Error(`Pi exited (${JSON.stringify(this.exit)}) before ${what}\n${this.recent()}`);
      const verdict = giveUp();
      if (typeof verdict === "string") throw new Error(`${verdict} waiting for ${what}\n${this.recent()}`);
      await new Promise<void>((done) => {
        const wake = (): void => {
          clearTimeout(timer);
          this.waiters.delete(wake);
          done();
        };
        const timer = setTimeout(wake, verdict);
        this.waiters.add(wake);
      });
    }
  }

  /** Events matching, so far. */
  where(match: (event: PiEvent) => boolean): PiEvent[] {
    return this.events.filter(match);
  }

  /** Ends Pi's stdin: in RPC mode Pi shuts the session down (session_shutdown runs) and exits. */
  endInput(): void {
    this.child.stdin?.end();
  }

  /**
   * Kills Pi's process group (SIGKILL) and removes its temporary directory. Children Pi started in
   * groups of their own (subagents, with their guards) end once their guard sees Pi gone, and may
   * still write in the directory meanwhile: its removal is tried again for a while.
   */
  async close(): Promise<void> {
    running.delete(this);
    // Closed while a wait is under way: the test gave up (its timeout), so say on what.
    if (this.awaited.length > 0) process.stderr.write(`Pi ${this.pid} closed${this.awaiting()}\n${this.recent()}\n`);
    const pid = this.child.pid;
    if (pid !== undefined && this.exit === undefined) {
      const exited = new Promise<void>((done) => this.child.once("exit", () => done()));
      killGroup(pid);
      await exited;
    } else if (pid !== undefined) {
      killGroup(pid);  // Pi is gone; anything it left in its group goes too
    }
    rmSync(this.dir, { recursive: true, force: true, maxRetries: 20, retryDelay: 100 });
  }

  /** ", while waiting for X", or "" when no wait is under way. */
  awaiting(): string {
    return this.awaited.length === 0 ? "" : ` while waiting for ${this.awaited.join(", ")}`;
  }

  /** The last events and stderr, for failure messages. */
  recent(): string {
    const events = this.events.slice(-RECENT_EVENTS_SHOWN).map((event) => abbreviate(JSON.stringify(event)));
    return `recent Pi events:\n  ${events.join("\n  ")}\nPi stderr (tail):\n${this.stderrText.slice(-3000)}`;
  }

  private onStdout(text: string): void {
    this.buffered += text;
    for (let newline = this.buffered.indexOf("\n"); newline >= 0; newline = this.buffered.indexOf("\n")) {
      const line = this.buffered.slice(0, newline).replace(/\r$/, "");
      this.buffered = this.buffered.slice(newline + 1);
      if (line.trim() === "") continue;
      try {
        this.events.push(JSON.parse(line) as PiEvent);
      } catch {
        this.events.push({ type: "unparsed", line });
      }
    }
    this.wake();
  }

  private wake(): void {
    for (const waiter of [...this.waiters]) waiter();
  }
}

/** models.json declaring the scripted model as provider `scripted`, API openai-completions. */
export function modelsJson(baseUrl: string, contextWindow: number): unknown {
  return {
    providers: {
      [scriptedProvider]: {
        baseUrl,
        api: "openai-completions",
        apiKey: "scripted",
        models: [{ id: scriptedModelId, name: "Scripted test model", contextWindow, maxTokens: 8192, reasoning: false, input: ["text"] }],
      },
    },
  };
}

/** SIGKILL to a process group; ESRCH (already gone) is fine. */
export function killGroup(pid: number): void {
  try {
    process.kill(-pid, "SIGKILL");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ESRCH") throw error;
  }
}

/** A process's CPU time so far (user + system), clock ticks; -1 once it is gone. */
function cpuTicks(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");  // fields[0] is field 3, state
    return Number(fields[11]) + Number(fields[12]);  // fields 14 and 15: utime, stime
  } catch {
    return -1;
  }
}

/**
 * Bytes that process `reader` has not read yet on its Unix sockets connected to process `writer`
 * (`ss -xpn`: each socket's receive queue, and the inode of its peer). For a stopped process, what
 * has arrived for it.
 */
export function unreadBytes(reader: number, writer: number): number {
  const rows = execFileSync("ss", ["-xpn"], { encoding: "utf8" })
    .split("\n")
    .slice(1)
    .map((line) => line.trim().split(/\s+/))
    .filter((fields) => fields.length >= 9)
    .map((fields) => ({ recvQ: Number(fields[2]), inode: fields[5], peer: fields[7], users: fields.slice(8).join(" ") }));
  const writerInodes = new Set(rows.filter((row) => row.users.includes(`pid=${writer},`)).map((row) => row.inode));
  return rows.filter((row) => row.users.includes(`pid=${reader},`) && writerInodes.has(row.peer)).reduce((sum, row) => sum + row.recvQ, 0);
}

/** Whether a process (or, with a negative pid, a process group) exists. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

function abbreviate(text: string): string {
  return text.length <= 400 ? text : `${text.slice(0, 300)} ...(${text.length} chars)... ${text.slice(-80)}`;
}
