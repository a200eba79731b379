// Settings of the subagent tools: extension options first, then environment variables, then the
// defaults named here. A malformed environment value is an error naming the variable.

/** Children running at once; more spawns queue. */
export const DEFAULT_MAX_RUNNING = 8;
/** A child's time limit, ms (30 min); past it its process group is killed and it completes as an error. */
export const DEFAULT_CHILD_TIMEOUT_MS = 30 * 60 * 1000;
/**
 * How long a child's conversation is kept for subagent_send once it has nothing running and all
 * its results reached the session, ms (1 h, the daemon's default `--forget-after-ms`). Then its
 * session files are removed and it is forgotten.
 */
export const DEFAULT_KEEP_MS = 60 * 60 * 1000;
/**
 * Set to "1" in every child Pi's environment: the extension then registers nothing there. A child
 * runs `--mode json`, which exits after its prompt, so subagents of its own would be killed
 * unfinished; nesting is not offered.
 */
export const SUBAGENT_CHILD_ENV = "HANDOFF_SUBAGENT_CHILD";
/** The most children one `subagent_wait` names (the daemon's `maxChildIds`). */
export const MAX_WAIT_IDS = 64;

export interface SubagentOptions {
  /** Children running at once, 1..256 ($HANDOFF_SUBAGENT_MAX_RUNNING, default 8). */
  maxRunning?: number;
  /** A child's time limit, ms, 1..7 days ($HANDOFF_SUBAGENT_TIMEOUT_MS, default 30 min). */
  childTimeoutMs?: number;
  /** How long an idle child's conversation is kept for subagent_send, ms, 1..7 days ($HANDOFF_SUBAGENT_KEEP_MS, default 1 h). */
  keepMs?: number;
  /** Where children's sessions are kept (default: child-sessions.ts, defaultSessionRoot). */
  sessionRoot?: string;
  /** Extra arguments for every child Pi, before the task ($HANDOFF_SUBAGENT_ARGS, whitespace-separated; default none). */
  childArgs?: string[];
  /** The Pi CLI script children run (default: the parent's, process.argv[1]). */
  piCli?: string;
  /** `ctx.ui.setStatus` key of the running/pending line (default "handoff-subagents"; null: none). */
  statusKey?: string | null;
}

export interface ResolvedSubagentOptions {
  maxRunning: number;
  childTimeoutMs: number;
  keepMs: number;
  sessionRoot: string | undefined;
  childArgs: string[];
  piCli: string | undefined;
  statusKey: string | null;
}

export function resolveSubagentOptions(options: SubagentOptions = {}, env: NodeJS.ProcessEnv = process.env): ResolvedSubagentOptions {
  return {
    maxRunning: options.maxRunning ?? integerFromEnv(env, "HANDOFF_SUBAGENT_MAX_RUNNING", DEFAULT_MAX_RUNNING, 1, 256),
    childTimeoutMs: options.childTimeoutMs ?? integerFromEnv(env, "HANDOFF_SUBAGENT_TIMEOUT_MS", DEFAULT_CHILD_TIMEOUT_MS, 1, 7 * 24 * 3600 * 1000),
    keepMs: options.keepMs ?? integerFromEnv(env, "HANDOFF_SUBAGENT_KEEP_MS", DEFAULT_KEEP_MS, 1, 7 * 24 * 3600 * 1000),
    sessionRoot: options.sessionRoot,
    childArgs: options.childArgs ?? (env["HANDOFF_SUBAGENT_ARGS"] ?? "").split(/\s+/).filter((arg) => arg !== ""),
    piCli: options.piCli,
    statusKey: options.statusKey === undefined ? "handoff-subagents" : options.statusKey,
  };
}

/** An integer environment variable within [min, max]; absent or empty gives the default. */
export function integerFromEnv(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const text = env[name];
  if (text === undefined || text.trim() === "") return fallback;
  const value = Number(text);
  if (!Number.isInteger(value) || value < min || value > max)
    throw new Error(`${name}=${JSON.stringify(text)}: expected an integer from ${min} to ${max}`);
  return value;
}
