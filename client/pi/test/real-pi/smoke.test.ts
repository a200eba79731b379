// Smoke test of the real-Pi harness: Pi 1.6.0 in RPC mode with this package loaded by `-e`, on the
// scripted model, against a real handoffd. A worker reports a child under Pi's session id while Pi
// is idle; the result lands in the session as our custom message and the model reads it next.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import { HandoffClient } from "../../src/client.js";
import { Daemon, numberedReport } from "../support/daemon.js";
import { RealPi } from "../support/real-pi.js";
import { ScriptedModel, textOf } from "../support/scripted-model.js";

let daemon: Daemon;
let model: ScriptedModel;

before(async () => {
  daemon = await Daemon.start();
  model = await ScriptedModel.start(() => ({ text: "ok" }));
});

after(async () => {
  await model.close();
  await daemon.dispose();
});

test("a real Pi answers from the scripted model and takes an auto-delivery from handoffd", async () => {
  const pi = await RealPi.start({ model, socketPath: daemon.socketPath });
  const worker = new HandoffClient({ socketPath: daemon.socketPath, clientName: "smoke-worker" });
  try {
    model.setScript(() => ({ text: "hello from the scripted model", promptTokens: 1234 }));
    await pi.prompt("say hello");
    const answer = await pi.waitFor((e) => e.type === "message_end" && (e["message"] as { role: string }).role === "assistant", 30_000, "the assistant's answer");
    assert.equal(((answer["message"] as { content: { text: string }[] }).content[0] as { text: string }).text, "hello from the scripted model");
    await pi.waitFor((e) => e.type === "agent_settled", 10_000, "agent_settled");
    assert.equal(model.requests[0]?.firstUser, "say hello");

    const sessionId = String((await pi.state())["sessionId"]);
    await worker.connect();
    const report = numberedReport(50, "smoke");
    await worker.started({ parentId: sessionId, childId: "smoke-1", title: "Smoke child" });
    await worker.completed({ parentId: sessionId, childId: "smoke-1", status: "done", finalText: report });

    const landed = await pi.waitFor(
      (e) => e.type === "message_end" && (e["message"] as { role: string; customType?: string }).customType === "handoff",
      20_000,
      "the delivered batch's message_end",
    );
    assert.match(JSON.stringify(landed["message"]), /BEGIN smoke/);
    // The delivery triggers a turn: the model's next request holds the batch, first and last line.
    await pi.waitFor((e) => e.type === "agent_settled", 20_000, "the triggered run to settle", pi.events.indexOf(landed));
    const seen = model.requests[model.requests.length - 1];
    const delivered = (seen?.body.messages ?? []).map(textOf).find((text) => text.includes("Subagent smoke-1"));
    assert.ok(delivered !== undefined, "the model saw the delivered batch");
    assert.match(delivered, /BEGIN smoke/);
    assert.match(delivered, /END smoke/);
  } finally {
    worker.close();
    await pi.close();
  }
});
