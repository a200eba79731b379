// One turn of a subagent: a child Pi process in JSON mode (`--mode json`, the task or a follow-up
// message as its prompt), watched from its event stream.
//
// Contract:
// - Runs `<guard node> child-guard.js <pi...> --mode json <session> [--provider P] --model M
//   [...extraArgs] <prompt>` in a process group of its own, led by the guard (child-guard.ts), which
//   ends the group when the parent dies; `<pi...>` is how Pi is started (pi-launch.ts). Without a
//   Node for the guard, Pi itself leads the group. `<session>` is `--session FILE --session-dir DIR`
//   (the child's own conversation, continued by its next turn: child-sessions.ts), or
//   `--no-session`. `kill()` ends the child (SIGTERM, so Pi kills its own detached bash commands)
//   and then the whole group.
// - `onActivity` gets the latest activity (a tool call starting, an assistant reply) as plain text.
// - `done` resolves once, with the outcome: "done" with the final assistant answer byte for byte
//   (the text blocks of the last assistant message that ended with stopReason "stop", joined), or
//   "error" with a clear reason: a non-zero exit, a signal, an assistant error/abort, no answer,
//   the time limit, or a failure to start. A child killed by `kill()` resolves "cancelled".
import { spawn, type ChildProcess } from "node:child_process";
import { constants } from "node:os";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";

import type { PiLaunch } from "./pi-launch.js";

export interface ChildSpec {
  /** How Pi is started, and the Node for the guard. */
  launch: PiLaunch;
  /** The prompt: the task, or a follow-up message. */
  task: string;
  /** The child's session file (its directory is the session directory); absent: `--no-session`. */
  session?: string;
  cwd: string;
  /** `--provider` (omitted when the model names it). */
  provider?: string;
  /** `--model`: an id, or "provider/id". */
  model?: string;
  /** Arguments put before the task. */
  extraArgs: readonly string[];
  env: NodeJS.ProcessEnv;
  /** Time limit, ms; past it the group is killed and the outcome is an error. */
  timeoutMs: number;
  onActivity: (text: string) => void;
}

export interface ChildOutcome {
  status: "done" | "error" | "cancelled";
  finalText: string;
  error?: string;
}

/** The most of the child's stderr kept for an error message, bytes. */
const STDERR_TAIL_CHARS = 2_000;
/** The most of one activity text sent as progress, chars (the daemon keeps a 2 KiB tail). */
const ACTIVITY_CHARS = 4_000;

/** After this, ms, a child that was told to stop has its group killed from here (the guard's grace is 3 s). */
const STOP_FALLBACK_MS = 5_000;

const guardScript = fileURLToPath(new URL("./child-guard.js", import.meta.url));

interface AssistantMessage {
  role: "assistant";
  content: { type: string; text?: string; name?: string }[];
  stopReason?: string;
  errorMessage?: string;
}

export class PiChild {
  readonly done: Promise<ChildOutcome>;
  private readonly process: ChildProcess;
  private lastAssistant: AssistantMessage | undefined;
  private answer: string | undefined;
  private stderrTail = "";
  private buffered = "";
  private ending: "cancelled" | "timeout" | undefined;
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly spec: ChildSpec) {
    const piArgs = ["--mode", "json", ...(spec.session === undefined ? ["--no-session"] : ["--session", spec.session, "--session-dir", dirname(spec.session)])];
    if (spec.provider !== undefined) piArgs.push("--provider", spec.provider);
    if (spec.model !== undefined) piArgs.push("--model", spec.model);
    piArgs.push(...spec.extraArgs, spec.task);
    const [pi, ...piPrefix] = spec.launch.pi as [string, ...string[]];
    const options = { cwd: spec.cwd, env: spec.env, detached: true };
    // Unguarded, Pi's stdin is closed as the guard would (Pi prepends piped stdin to its prompt).
    this.process =
      spec.launch.guardNode === undefined
        ? spawn(pi, [...piPrefix, ...piArgs], { ...options, stdio: ["ignore", "pipe", "pipe"] })
        : spawn(spec.launch.guardNode, [guardScript, pi, ...piPrefix, ...piArgs], { ...options, stdio: ["pipe", "pipe", "pipe"] });
    this.process.stdout?.setEncoding("utf8");
    this.process.stdout?.on("data", (text: string) => this.onStdout(text));
    this.process.stderr?.setEncoding("utf8");
    this.process.stderr?.on("data", (text: string) => {
      this.stderrTail = (this.stderrTail + text).slice(-STDERR_TAIL_CHARS);
    });
    this.process.stdin?.on("error", () => undefined);  // the guard died: its exit tells the rest
    this.timer = setTimeout(() => this.end("timeout"), spec.timeoutMs);
    this.timer.unref();
    this.done = new Promise((resolve) => {
      this.process.once("error", (error) => {
        clearTimeout(this.timer);
        resolve({ status: "error", finalText: "", error: `the child Pi did not start: ${error.message}` });
      });
      // Whatever the child left in its group goes with it (and stops holding our pipes open).
      this.process.once("exit", () => this.killGroup());
      this.process.once("close", (code, signal) => {
        clearTimeout(this.timer);
        resolve(this.outcome(code, signal));
      });
    });
  }

  /** The group's id (the guard's pid); undefined if it did not start. */
  get pid(): number | undefined {
    return this.process.pid;
  }

  /** Ends the child's whole process tree; `done` resolves "cancelled". */
  kill(): void {
    this.end("cancelled");
  }

  /** The guard stops the child Pi gracefully, then kills the group; we kill it if the guard cannot. */
  private end(reason: "cancelled" | "timeout"): void {
    if (this.ending !== undefined) return;
    this.ending = reason;
    try {
      this.process.kill("SIGTERM");
    } catch {
      // already gone
    }
    const fallback = setTimeout(() => this.killGroup(), STOP_FALLBACK_MS);
    fallback.unref();
  }

  private killGroup(): void {
    const pid = this.process.pid;
    if (pid === undefined) return;
    try {
      process.kill(-pid, "SIGKILL");
    } catch {
      // ESRCH: the group is gone already
    }
  }

  private outcome(code: number | null, signal: NodeJS.Signals | null): ChildOutcome {
    const finalText = this.answer ?? "";
    if (this.ending === "cancelled") return { status: "cancelled", finalText, error: "cancelled by the parent" };
    if (this.ending === "timeout")
      return { status: "error", finalText, error: `the child Pi passed its time limit of ${this.spec.timeoutMs} ms and was killed` };
    if (code !== 0 || signal !== null) {
      // The guard passes a signal that killed the child Pi on as 128 + its number.
      const byGuard = code !== null && code > 128 ? signalName(code - 128) : undefined;
      const how = signal !== null ? `was killed by ${signal}` : byGuard !== undefined ? `was killed by ${byGuard}` : `exited with code ${String(code)}`;
      return { status: "error", finalText, error: `the child Pi ${how}${this.stderrSuffix()}` };
    }
    const last = this.lastAssistant;
    if (last !== undefined && (last.stopReason === "error" || last.stopReason === "aborted"))
      return { status: "error", finalText, error: `the child's model request ended with ${last.stopReason}: ${last.errorMessage ?? "no message"}` };
    if (this.answer === undefined) return { status: "error", finalText: "", error: `the child Pi ended without an answer${this.stderrSuffix()}` };
    return { status: "done", finalText };
  }

  private stderrSuffix(): string {
    const tail = this.stderrTail.trim();
    return tail === "" ? "" : `; stderr: ${tail}`;
  }

  /** Pi's JSON records, split on "\n" only (U+2028 may occur inside strings). */
  private onStdout(text: string): void {
    this.buffered += text;
    for (let newline = this.buffered.indexOf("\n"); newline >= 0; newline = this.buffered.indexOf("\n")) {
      const line = this.buffered.slice(0, newline);
      this.buffered = this.buffered.slice(newline + 1);
      let record: { type?: string; [key: string]: unknown };
      try {
        record = JSON.parse(line) as typeof record;
      } catch {
        continue;  // not a record (Pi keeps stdout for JSON; be lenient with anything else)
      }
      this.onRecord(record);
    }
  }

  private onRecord(record: { type?: string; [key: string]: unknown }): void {
    if (record.type === "tool_execution_start") {
      const args = JSON.stringify(record["args"] ?? {});
      this.activity(`running ${String(record["toolName"])} ${args}`);
    } else if (record.type === "message_end") {
      const message = record["message"] as { role?: string } | undefined;
      if (message?.role !== "assistant") return;
      const assistant = message as AssistantMessage;
      this.lastAssistant = assistant;
      const text = assistant.content.filter((part) => part.type === "text").map((part) => part.text ?? "").join("");
      if (assistant.stopReason === "stop") this.answer = text;
      if (text !== "") this.activity(text);
    }
  }

  private activity(text: string): void {
    this.spec.onActivity(text.length <= ACTIVITY_CHARS ? text : text.slice(-ACTIVITY_CHARS));
  }
}

function signalName(number: number): string | undefined {
  return Object.entries(constants.signals).find(([, value]) => value === number)?.[0];
}
