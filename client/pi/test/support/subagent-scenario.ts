// Shared pieces of the real-Pi subagent tests: a daemon, the scripted model and a parent Pi with
// this package; reports of an exact size; reading the parent's tool results and delivered batches.
import { readdirSync, readFileSync } from "node:fs";
import { afterEach } from "node:test";

import { HandoffClient } from "../../src/client.js";
import { Daemon, eventually } from "./daemon.js";
import { RealPi, type PiEvent, type RealPiOptions } from "./real-pi.js";
import { ScriptedModel, textOf, type ModelRequest, type Script } from "./scripted-model.js";

export interface Scenario {
  daemon: Daemon;
  model: ScriptedModel;
  pi: RealPi;
  worker: HandoffClient;
  sessionId: string;
  close(): Promise<void>;
}

/** A parent Pi with the package on a scripted model, and a worker client for status checks. */
export async function startScenario(script: Script, options: Partial<RealPiOptions> = {}): Promise<Scenario> {
  const daemon = await Daemon.start();
  const model = await ScriptedModel.start(script);
  let pi: RealPi | undefined;
  const worker = new HandoffClient({ socketPath: daemon.socketPath, clientName: "test-worker" });
  try {
    pi = await RealPi.start({
      model,
      socketPath: daemon.socketPath,
      ...options,
      // Children skip extension discovery: faster, and they need none.
      env: { HANDOFF_SUBAGENT_ARGS: "-ne", ...options.env },
    });
    await worker.connect();
    const sessionId = String((await pi.state())["sessionId"]);
    const started = pi;
    return {
      daemon,
      model,
      pi: started,
      worker,
      sessionId,
      close: () => closeAll(worker, started, model, daemon),
    };
  } catch (error) {
    await closeAll(worker, pi, model, daemon);
    throw error;
  }
}

/**
 * Closes each of them, in order, even when one fails (then throws the first failure): a model
 * server or a daemon left open would keep the test process alive after its tests.
 */
async function closeAll(...things: ({ close(): unknown } | { dispose(): Promise<void> } | undefined)[]): Promise<void> {
  const failures: unknown[] = [];
  for (const thing of things) {
    try {
      if (thing !== undefined) await ("dispose" in thing ? thing.dispose() : thing.close());
    } catch (error) {
      failures.push(error);
    }
  }
  if (failures.length > 0) throw failures[0];
}

/**
 * For a test file: `scenario(...)` starts one (as startScenario) that is closed after the test,
 * and `onCleanup` adds other clean-ups, run last first.
 */
export function scenarioPerTest(): { scenario: typeof startScenario; onCleanup: (cleanup: () => Promise<void> | void) => void } {
  const cleanups: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    // Every clean-up runs, even after one failed (then the first failure is the hook's).
    const failures: unknown[] = [];
    for (let cleanup = cleanups.pop(); cleanup !== undefined; cleanup = cleanups.pop()) {
      try {
        await cleanup();
      } catch (error) {
        failures.push(error);
      }
    }
    if (failures.length > 0) throw failures[0];
  });
  return {
    scenario: async (...args) => {
      const s = await startScenario(...args);
      cleanups.push(() => s.close());
      return s;
    },
    onCleanup: (cleanup) => void cleanups.push(cleanup),
  };
}

/**
 * Returns once nothing more can be delivered to the parent, so no duplicate can come later: the
 * extension's status line is clear (no turn running, queued, or finished and not delivered: no
 * completion left to send or retry), and handoffd holds no result and no delivery awaiting its
 * acknowledgement (a delivery stays recorded until the extension acknowledges it at its
 * message_end). Then every event Pi wrote before its answer to get_state has been read, so a copy
 * that did land is in `pi.events`.
 */
export async function nothingLeftToDeliver(s: Scenario, timeoutMs = 30_000): Promise<void> {
  await eventually("the extension's subagents status line to clear", () => {
    const line = s.pi.where((e) => e.type === "extension_ui_request" && e["statusKey"] === "handoff-subagents").at(-1);
    return line?.["statusText"] === undefined || undefined;
  }, timeoutMs);
  await eventually("handoffd to hold nothing more for the parent", async () => {
    const { queue } = await s.worker.status();
    return (queue.results === 0 && queue.deliveries === 0) || undefined;
  }, timeoutMs);
  await s.pi.state();
}

/** A text of exactly `bytes` bytes and `lines` lines: `BEGIN tag`, numbered filler, `END tag`. */
export function exactReport(bytes: number, lines: number, tag: string): string {
  const first = `BEGIN ${tag}`;
  const last = `END ${tag}`;
  const middle: string[] = [];
  for (let i = 2; i < lines; i += 1) middle.push(`${tag} line ${i}: `);
  const fixed = first.length + last.length + middle.reduce((sum, line) => sum + line.length, 0) + (lines - 1);
  const spare = bytes - fixed;
  if (spare < 0 || middle.length === 0) throw new Error(`exactReport: ${bytes} B is too small for ${lines} lines`);
  const each = Math.floor(spare / middle.length);
  const padded = middle.map((line, index) => line + "x".repeat(each + (index < spare - each * middle.length ? 1 : 0)));
  const text = [first, ...padded, last].join("\n");
  if (Buffer.byteLength(text) !== bytes || text.split("\n").length !== lines) throw new Error("exactReport: size mismatch");
  return text;
}

/** Numbered lines up to `bytes`, first line `BEGIN tag`, last line `END tag`. */
export function answerOfBytes(bytes: number, tag: string): string {
  const lines = [`BEGIN ${tag}`];
  let size = lines[0]!.length;
  for (let i = 2; size < bytes - 20; i += 1) {
    const line = `${tag} line ${i}: ${"x".repeat(44)}`;
    lines.push(line);
    size += line.length + 1;
  }
  lines.push(`END ${tag}`);
  return lines.join("\n");
}

/** Pi's message_end events of delivered batches (role custom, customType handoff). */
export function deliveredBatches(pi: RealPi): { text: string; details: Record<string, unknown>; index: number }[] {
  return pi.events.flatMap((event, index) => {
    if (event.type !== "message_end") return [];
    const message = event["message"] as { role?: string; customType?: string; content?: unknown; details?: Record<string, unknown> };
    if (message.role !== "custom" || message.customType !== "handoff") return [];
    const text = typeof message.content === "string" ? message.content : JSON.stringify(message.content);
    return [{ text, details: message.details ?? {}, index }];
  });
}

/** The `tool_execution_end` of `toolName` (the first from event index `from`). */
export function toolEnd(pi: RealPi, toolName: string, timeoutMs = 30_000, from = 0): Promise<PiEvent> {
  return pi.waitFor((e) => e.type === "tool_execution_end" && e["toolName"] === toolName, timeoutMs, `${toolName} to end`, from);
}

/** The text a tool result event carries. */
export function toolText(event: PiEvent): string {
  const result = event["result"] as { content?: { type: string; text?: string }[] } | undefined;
  return (result?.content ?? []).map((part) => part.text ?? "").join("\n");
}

/** The last message of each request the parent (not a child) sent: the first user message names it. */
export function parentRequests(model: ScriptedModel, firstUserPrefix: string): ModelRequest[] {
  return model.requests.filter((request) => request.firstUser.startsWith(firstUserPrefix));
}

/** The subagent id named in a spawn result text. */
export function spawnedId(text: string): string {
  const match = /subagent (sa-[0-9a-f]+)/.exec(text);
  if (match?.[1] === undefined) throw new Error(`no subagent id in ${JSON.stringify(text)}`);
  return match[1];
}

/** Ids of spawned children in the tool results the model saw (in order). */
export function spawnedIdsSeen(request: ModelRequest): string[] {
  return request.body.messages
    .filter((message) => message.role === "tool")
    .map(textOf)
    .flatMap((text) => [...text.matchAll(/(?:Started|Queued) subagent (sa-[0-9a-f]+)/g)].map((m) => m[1] as string));
}

/** Pids of live processes whose command line contains `marker`. */
export function processesWith(marker: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, "utf8");
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      if (cmdline.includes(marker) && !/\) Z /.test(stat)) pids.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}
