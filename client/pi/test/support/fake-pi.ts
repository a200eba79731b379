// A stand-in for Pi's ExtensionAPI and ExtensionContext that records what the adapter does with
// them: handlers registered with `on`, tools registered, messages sent. Type-checked against the
// adapter's view of Pi's real types (PiApi, PiContext).
import type { ContextUsage } from "@earendil-works/pi-coding-agent";

import type { PiApi, PiContext } from "../../src/pi-adapter.js";

export interface SentMessage {
  message: { customType: string; content: unknown; display: boolean; details?: unknown };
  options: { triggerTurn?: boolean; deliverAs?: "steer" | "followUp" | "nextTurn" } | undefined;
}

type Handler = (event: unknown, ctx: PiContext) => unknown;

export class FakePi {
  readonly handlers = new Map<string, Handler[]>();
  readonly tools: unknown[] = [];
  readonly sent: SentMessage[] = [];
  /**
   * What sendMessage does after recording the call. By default what Pi 1.6.0 does for an idle
   * session: returns undefined at once, the message lands (message_end, role "custom") right
   * after. Replace to throw, to return a promise, or to land late or never.
   */
  sendMessageImpl: (call: SentMessage) => unknown = (call) => {
    setImmediate(() => void this.land(call));
    return undefined;
  };

  /** Emits the message_end of a sent custom message, as Pi does once it is in the session. */
  async land(call: SentMessage): Promise<void> {
    await this.emit("message_end", { message: { role: "custom", ...call.message, timestamp: Date.now() } });
  }

  // Pi's handlers take each event's own type; the stand-in stores them all alike.
  on(event: string, handler: (...args: never[]) => unknown): () => void {
    const stored = handler as Handler;
    const list = this.handlers.get(event) ?? [];
    list.push(stored);
    this.handlers.set(event, list);
    return () => void list.splice(list.indexOf(stored), 1);
  }

  registerTool(tool: unknown): void {
    this.tools.push(tool);
  }

  sendMessage(message: SentMessage["message"], options?: SentMessage["options"]): unknown {
    const call: SentMessage = { message, options };
    this.sent.push(call);
    return this.sendMessageImpl(call);
  }

  /** Runs every handler of `event` in order, as Pi does. */
  async emit(event: string, payload: Record<string, unknown>, ctx: FakeContext = new FakeContext("unused")): Promise<void> {
    for (const handler of this.handlers.get(event) ?? []) await handler({ type: event, ...payload }, ctx);
  }

  /** The typed view the adapter takes (checked against Pi's ExtensionAPI by the compiler). */
  get api(): PiApi {
    return this;
  }
}

export class FakeContext implements PiContext {
  usage: ContextUsage | undefined = undefined;
  idle = true;
  usageCalls = 0;
  readonly statuses: (string | undefined)[] = [];
  readonly hasUI = true;
  readonly ui = { setStatus: (_key: string, text: string | undefined): void => void this.statuses.push(text) };
  readonly sessionManager: { getSessionId(): string };

  constructor(sessionId: string) {
    this.sessionManager = { getSessionId: () => sessionId };
  }

  getContextUsage(): ContextUsage | undefined {
    this.usageCalls += 1;
    return this.usage;
  }

  isIdle(): boolean {
    return this.idle;
  }
}
