// Captures Pi's terminal screen with this extension at work, for the README: a real Pi 1.6.0 in
// tmux (130 x 40) on the scripted test model, a real handoffd, two subagents (a 171 KB audit that
// takes 5 s, a one-line test run). Writes running.txt (the status line while one child runs),
// collapsed.txt (both batches delivered) and expanded.txt (after Ctrl+O) into the directory given
// (default: the current one).
//
//   npm run build && node dist/examples/capture-pi-screen.js /tmp/shots
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

import { Daemon, delay, packageRoot } from "../test/support/daemon.js";
import { defaultPiCli, modelsJson, node22Path, scriptedModelId, scriptedProvider } from "../test/support/real-pi.js";
import { ScriptedModel, textOf } from "../test/support/scripted-model.js";
import { exactReport } from "../test/support/subagent-scenario.js";

const out = resolve(process.argv[2] ?? ".");
const session = `handoff-shot-${process.pid}`;
const tmux = (...args: string[]): string => execFileSync("tmux", args, { encoding: "utf8" });

const daemon = await Daemon.start();
const model = await ScriptedModel.start((request) => {
  if (request.firstUser.startsWith("CHILD audit")) return { text: exactReport(171_000, 3_000, "audit"), delayMs: 5_000 };
  if (request.firstUser.startsWith("CHILD tests")) return { text: "All 214 tests pass." };
  const last = request.last;
  if (last?.role === "user" && textOf(last).startsWith("Audit"))
    return {
      toolCalls: [
        { name: "subagent_spawn", arguments: { task: "CHILD audit the parser", title: "Audit the parser" } },
        { name: "subagent_spawn", arguments: { task: "CHILD tests run", title: "Run the tests" } },
      ],
    };
  if (last?.role === "tool") return { text: "Two subagents are working; their results will arrive here." };
  return { text: "Got it." };
});
const dir = mkdtempSync(join(tmpdir(), "handoff-shot-"));
try {
  const [home, agent, cwd] = ["home", "agent", "project"].map((name) => join(dir, name)) as [string, string, string];
  for (const path of [home, agent, cwd, out]) mkdirSync(path, { recursive: true });
  writeFileSync(join(agent, "models.json"), JSON.stringify(modelsJson(model.baseUrl, 200_000)));
  const env = [`HOME=${home}`, `PI_CODING_AGENT_DIR=${agent}`, "PI_OFFLINE=1", "PI_SKIP_VERSION_CHECK=1", "PI_TELEMETRY=0",
    `HANDOFF_SOCKET=${daemon.socketPath}`, "HANDOFF_SUBAGENT_ARGS=-ne", "TERM=xterm-256color"];
  const pi = [node22Path(), defaultPiCli, "--no-session", "--offline", "-ne", "-e", packageRoot, "--provider", scriptedProvider, "--model", scriptedModelId];
  tmux("new-session", "-d", "-s", session, "-x", "130", "-y", "40", "-c", cwd, ["env", ...env, ...pi].join(" "));
  await delay(4_000);
  tmux("send-keys", "-t", session, "Audit the parser and run the tests, in parallel", "Enter");
  await delay(3_500);
  writeFileSync(join(out, "running.txt"), tmux("capture-pane", "-p", "-t", session));
  await delay(7_000);
  writeFileSync(join(out, "collapsed.txt"), tmux("capture-pane", "-p", "-t", session));
  tmux("send-keys", "-t", session, "C-o");
  await delay(1_500);
  writeFileSync(join(out, "expanded.txt"), tmux("capture-pane", "-p", "-t", session, "-S", "-200"));
} finally {
  try {
    tmux("kill-session", "-t", session);
  } catch {
    // not started
  }
  await model.close();
  await daemon.dispose();
  rmSync(dir, { recursive: true, force: true });
}
