// The leader of a subagent's process group: runs `node <pi-cli> <args...>` in its own group and
// ends that whole group when the parent Pi goes away.
//
// Usage: node child-guard.js <pi-cli> <args...>   (spawned detached, stdin a pipe from the parent)
//
// - The parent holds the write end of our stdin and never writes; when it exits, however it dies
//   (kill -9 included), the pipe reaches end of file and we end the group: no orphan outlives Pi.
// - Ending (end of stdin, or SIGTERM/SIGINT/SIGHUP to us): SIGTERM to the child Pi first, which
//   kills the process groups of its own bash commands (Pi starts those detached, outside our
//   group); after STOP_GRACE_MS, SIGKILL to our whole group.
// - The child's stdout and stderr are ours (inherited), so the parent reads Pi's JSON events
//   directly; the child's stdin is closed (Pi would prepend piped stdin to its prompt).
// - We exit with the child's exit code, or 128 + signal number when it was killed by a signal.
import { spawn } from "node:child_process";
import { constants } from "node:os";

const [piCli, ...args] = process.argv.slice(2);
if (piCli === undefined) {
  process.stderr.write("child-guard: usage: child-guard.js <pi-cli> <args...>\n");
  process.exit(2);
}

const child = spawn(process.execPath, [piCli, ...args], { stdio: ["ignore", "inherit", "inherit"] });

/** How long the child Pi gets to clean up after SIGTERM before the group is killed, ms. */
const STOP_GRACE_MS = 3_000;

let ending = false;

function killGroup(): void {
  try {
    process.kill(-process.pid, "SIGKILL");  // the group we lead: the child Pi and whatever it started
  } catch {
    process.exit(137);
  }
}

function endGroup(): void {
  if (ending) return;
  ending = true;
  if (child.exitCode !== null || child.signalCode !== null || !child.kill("SIGTERM")) killGroup();
  setTimeout(killGroup, STOP_GRACE_MS);
}

process.stdin.on("end", endGroup);
process.stdin.on("error", endGroup);
process.stdin.resume();
for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"] as const) process.on(signal, endGroup);

child.once("error", (error) => {
  process.stderr.write(`child-guard: could not start Pi: ${error.message}\n`);
  process.exit(127);
});
child.once("exit", (code, signal) => {
  // Ended on purpose: take whatever the child left in the group along (this kills us too).
  if (ending) killGroup();
  process.exit(code ?? 128 + (signal === null ? 0 : (constants.signals[signal] ?? 0)));
});
