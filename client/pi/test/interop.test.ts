// Interoperability with a stock JSON-RPC implementation nobody here wrote: Microsoft's
// vscode-jsonrpc (LSP-style Content-Length framing) talks to handoffd over its Unix socket.
import assert from "node:assert/strict";
import { connect, type Socket } from "node:net";
import { after, before, describe, test } from "node:test";

import {
  createMessageConnection,
  ResponseError,
  StreamMessageReader,
  StreamMessageWriter,
  type MessageConnection,
} from "vscode-jsonrpc/node";

import { Daemon, eventually } from "./support/daemon.js";

async function open(socketPath: string): Promise<{ socket: Socket; rpc: MessageConnection }> {
  const socket = connect({ path: socketPath });
  await new Promise<void>((resolve, reject) => {
    socket.once("connect", resolve);
    socket.once("error", reject);
  });
  const rpc = createMessageConnection(new StreamMessageReader(socket), new StreamMessageWriter(socket));
  rpc.listen();
  return { socket, rpc };
}

describe("vscode-jsonrpc against handoffd", () => {
  let daemon: Daemon;
  const opened: { socket: Socket; rpc: MessageConnection }[] = [];

  before(async () => {
    daemon = await Daemon.start();
  });

  after(async () => {
    for (const { socket, rpc } of opened) {
      rpc.dispose();
      socket.destroy();
    }
    await daemon.dispose();
  });

  async function client(): Promise<MessageConnection> {
    const c = await open(daemon.socketPath);
    opened.push(c);
    return c.rpc;
  }

  test("subagent/completed -> subagent/wait round trip", async () => {
    const rpc = await client();
    const init = (await rpc.sendRequest("initialize", { clientName: "vscode-jsonrpc" })) as Record<string, unknown>;
    assert.equal(init["protocolVersion"], "1");

    const text = "report from a stock client\nverdict: ok";
    const done = (await rpc.sendRequest("subagent/completed", {
      parentId: "lsp",
      childId: "c1",
      title: "stock",
      status: "done",
      finalText: text,
    })) as Record<string, unknown>;
    assert.equal(done["duplicate"], false);
    assert.equal(done["lines"], 2);

    const waited = (await rpc.sendRequest("subagent/wait", { parentId: "lsp", childIds: ["c1"], timeoutMs: 5_000 })) as {
      sections: { childId: string; text: string; truncated: boolean }[];
      timedOut: boolean;
      text: string;
    };
    assert.equal(waited.timedOut, false);
    assert.equal(waited.sections.length, 1);
    assert.equal(waited.sections[0]?.childId, "c1");
    assert.equal(waited.sections[0]?.text, text);
    assert.equal(waited.sections[0]?.truncated, false);
    assert.ok(waited.text.includes("verdict: ok"));
  });

  test("errors arrive as ResponseError with the daemon's codes", async () => {
    const rpc = await client();
    await assert.rejects(rpc.sendRequest("subagent/check", { parentId: "nobody", childId: "x" }), (error: unknown) => {
      assert.ok(error instanceof ResponseError);
      assert.equal(error.code, -32001);
      return true;
    });
    await assert.rejects(rpc.sendRequest("subagent/nothing", {}), (error: unknown) => {
      assert.ok(error instanceof ResponseError);
      assert.equal(error.code, -32601);
      return true;
    });
  });

  test("as a parent endpoint: context/usage and parent/deliver requests, acknowledged by the reply", async () => {
    const parent = await client();
    const usageAsked: unknown[] = [];
    const delivered: Record<string, unknown>[] = [];
    parent.onRequest("context/usage", (params: unknown) => {
      usageAsked.push(params);
      return { tokens: 5_000, contextWindow: 100_000, percent: 5 };
    });
    parent.onRequest("parent/deliver", (params: Record<string, unknown>) => {
      delivered.push(params);
      return {};
    });
    await parent.sendRequest("initialize", { clientName: "vscode-jsonrpc-parent", parentId: "lsp-parent" });

    const worker = await client();
    await worker.sendRequest("subagent/completed", { parentId: "lsp-parent", childId: "a", status: "done", finalText: "auto" });
    await parent.sendNotification("parent/state", { parentId: "lsp-parent", state: "idle" });

    const batch = await eventually("the delivery", () => delivered[0]);
    assert.deepEqual(usageAsked, [{ parentId: "lsp-parent" }]);
    assert.equal(batch["parentId"], "lsp-parent");
    assert.equal(typeof batch["deliveryId"], "string");
    assert.equal((batch["budget"] as Record<string, unknown>)["mode"], "dynamic");
    await eventually("the acknowledgement to empty the queue", async () => {
      const status = (await worker.sendRequest("daemon/status")) as { queue: { results: number; deliveries: number } };
      return status.queue.results === 0 && status.queue.deliveries === 0;
    });
  });
});
