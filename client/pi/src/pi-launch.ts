// How a child Pi is started: the command that runs Pi, and the Node that runs its guard
// (child-guard.js, which ends the child's process group when the parent Pi dies).
//
// - Pi on Node (npm's `pi`): process.execPath is Node and process.argv[1] Pi's CLI script, so the
//   child runs `node cli.js ...` under the guard on the same Node.
// - A Bun-compiled Pi (process.versions.bun set): process.execPath is the pi binary itself, which
//   runs Pi directly and cannot run our guard script. The child runs `pi ...`; the guard runs on the
//   first `node` on PATH. Without one, children run unguarded: subagent_cancel, the time limit and
//   session shutdown still end their whole process group, but a parent killed with SIGKILL leaves
//   them running until they finish.
import { accessSync, constants } from "node:fs";
import { delimiter, join } from "node:path";

/** What is read of the parent Pi's process. */
export interface ParentRuntime {
  execPath: string;
  /** process.argv[1]. */
  argv1: string | undefined;
  /** Pi is a Bun-compiled binary. */
  bun: boolean;
  /** $PATH, to find a Node for the guard under Bun. */
  path: string | undefined;
}

export interface PiLaunch {
  /** The program and leading arguments that run Pi: [node, cli.js], or [pi] for a compiled Pi. */
  pi: string[];
  /** The Node that runs child-guard.js; undefined: none found, the child runs without the guard. */
  guardNode: string | undefined;
}

export function currentRuntime(): ParentRuntime {
  return { execPath: process.execPath, argv1: process.argv[1], bun: process.versions["bun"] !== undefined, path: process.env["PATH"] };
}

/** How to start a child Pi; `piCli` (a Pi CLI script) overrides the parent's own Pi. Throws when it cannot tell. */
export function piLaunch(runtime: ParentRuntime, piCli: string | undefined): PiLaunch {
  if (!runtime.bun) {
    const cli = piCli ?? runtime.argv1;
    if (cli === undefined) throw new Error("subagent_spawn: cannot tell which Pi CLI this session runs (process.argv[1] is unset)");
    return { pi: [runtime.execPath, cli], guardNode: runtime.execPath };
  }
  const node = onPath("node", runtime.path);
  if (piCli === undefined) return { pi: [runtime.execPath], guardNode: node };
  if (node === undefined) throw new Error(`subagent_spawn: the Pi CLI script ${piCli} needs a \`node\` on PATH (this Pi is a compiled binary)`);
  return { pi: [node, piCli], guardNode: node };
}

function onPath(program: string, path: string | undefined): string | undefined {
  for (const dir of (path ?? "").split(delimiter)) {
    if (dir === "") continue;
    const candidate = join(dir, program);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}
