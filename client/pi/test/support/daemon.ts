// A real handoffd on a private temporary socket, for tests: start, kill -9, restart on the same
// directories (so its durable queue carries over), and its log for failure messages. A daemon
// not disposed of when the test process exits (a test that timed out) is killed then.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, openSync, closeSync, readFileSync, rmSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** The package root (client/pi), from dist/test/support/. */
export const packageRoot = resolve(fileURLToPath(new URL("../../../", import.meta.url)));

/** $HANDOFFD (set by the CTest registration), else ../../build/daemon/handoffd relative to client/pi. */
export function handoffdPath(): string {
  const path = process.env["HANDOFFD"] ?? resolve(packageRoot, "../../build/daemon/handoffd");
  if (!existsSync(path)) throw new Error(`handoffd not found at ${path}: build it, or set HANDOFFD`);
  return path;
}

/** Daemons running now: killed when the test process exits. */
const running = new Set<ChildProcess>();
process.once("exit", () => {
  for (const child of running) child.kill("SIGKILL");
});

export class Daemon {
  readonly dir: string;
  readonly socketPath: string;
  readonly artifactDir: string;
  readonly queueDir: string;
  readonly logPath: string;
  private process: ChildProcess | undefined;

  private constructor(private readonly extraArgs: readonly string[]) {
    this.dir = mkdtempSync(join(tmpdir(), "handoff-ts-"));
    mkdirSync(join(this.dir, "run"), { mode: 0o700 });
    this.socketPath = join(this.dir, "run", "handoffd.sock");
    this.artifactDir = join(this.dir, "artifacts");
    this.queueDir = join(this.dir, "queue");
    this.logPath = join(this.dir, "handoffd.log");
  }

  /** Starts a daemon in a fresh temporary directory and waits until its socket accepts. */
  static async start(extraArgs: readonly string[] = []): Promise<Daemon> {
    const daemon = new Daemon(extraArgs);
    await daemon.launch();
    return daemon;
  }

  get pid(): number | undefined {
    return this.process?.pid;
  }

  /** Starts it again on the same directories (after kill or stop). */
  async launch(): Promise<void> {
    if (this.process !== undefined) throw new Error("handoffd is already running");
    const log = openSync(this.logPath, "a", 0o600);
    const args = ["--socket", this.socketPath, "--artifact-dir", this.artifactDir, "--queue-dir", this.queueDir, "--log-level", "debug"];
    const child = spawn(handoffdPath(), [...args, ...this.extraArgs], { stdio: ["ignore", log, log] });
    closeSync(log);
    this.process = child;
    running.add(child);
    let exited = false;
    child.once("exit", () => {
      exited = true;
      running.delete(child);
    });
    for (let i = 0; i < 500; i += 1) {
      if (exited) {
        this.process = undefined;
        throw new Error(`handoffd exited at start; log:\n${this.log()}`);
      }
      if (await accepts(this.socketPath)) return;
      await delay(10);  // the poll interval
    }
    throw new Error(`handoffd did not listen within 5 s; log:\n${this.log()}`);
  }

  /** SIGKILL, and wait until it is gone. */
  async kill(): Promise<void> {
    await this.signal("SIGKILL");
  }

  /** SIGTERM (a clean stop), and wait until it is gone. */
  async stop(): Promise<void> {
    await this.signal("SIGTERM");
  }

  /** Kills it and removes its directory. */
  async dispose(): Promise<void> {
    await this.kill();
    rmSync(this.dir, { recursive: true, force: true });
  }

  log(): string {
    return existsSync(this.logPath) ? readFileSync(this.logPath, "utf8") : "(no log)";
  }

  private async signal(signal: NodeJS.Signals): Promise<void> {
    const child = this.process;
    if (child === undefined) return;
    this.process = undefined;
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((done) => child.once("exit", () => done()));
    child.kill(signal);
    await exited;
  }
}

function accepts(path: string): Promise<boolean> {
  return new Promise((done) => {
    const socket = connect({ path });
    socket.once("connect", () => {
      socket.destroy();
      done(true);
    });
    socket.once("error", () => done(false));
  });
}

export function delay(ms: number): Promise<void> {
  return new Promise((done) => setTimeout(done, ms));
}

/** Polls `probe` until it returns true (or a value that is not false/undefined), at most `timeoutMs`. */
export async function eventually<T>(what: string, probe: () => T | false | undefined | Promise<T | false | undefined>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== false && value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await delay(20);  // the poll interval
  }
}

/** A report of `lines` numbered lines with a recognisable first and last line. */
export function numberedReport(lines: number, tag: string): string {
  const out: string[] = [`BEGIN ${tag}`];
  for (let i = 2; i < lines; i += 1) out.push(`${tag} line ${i}: ${"x".repeat(40)}`);
  out.push(`END ${tag}`);
  return out.join("\n");
}

/**
 * Sends one subagent/completed to handoffd from another process and returns once it was
 * answered, blocking this process's event loop meanwhile (spawnSync): a test can then have
 * handoffd answer something on this process's connections before this process reads it.
 */
export function completeBlocking(socketPath: string, parentId: string, childId: string, finalText: string): void {
  const request = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "subagent/completed", params: { parentId, childId, status: "done", finalText } });
  const script = `import net from "node:net";
const s = net.connect(${JSON.stringify(socketPath)});
s.on("connect", () => s.write(${JSON.stringify(request)} + String.fromCharCode(10)));
let got = "";
s.on("data", (d) => { got += d; if (got.includes(String.fromCharCode(10))) { if (!got.includes('"result"')) { console.error(got); process.exit(1); } s.end(); process.exit(0); } });
s.on("error", (e) => { console.error(String(e)); process.exit(1); });`;
  const run = spawnSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8", timeout: 10_000 });
  if (run.status !== 0) throw new Error(`completing ${childId} of ${parentId} from another process failed: ${run.stderr}`);
}
