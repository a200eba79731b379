// A scripted OpenAI-compatible model on 127.0.0.1 (random port), for running a real Pi in tests.
//
// - `POST /v1/chat/completions` (streaming) asks the script for a reply: a function of the request,
//   so a parent's and a child's requests can be told apart (by system prompt, first user message...).
// - The reply streams as SSE chunks: text (in 16 KiB deltas) or tool calls, a chunk with
//   `finish_reason`, a usage chunk whose `prompt_tokens` the script sets (default 1000; that is what
//   Pi's `ctx.getContextUsage().tokens` says next), then `data: [DONE]`.
// - Every request body is recorded (`requests`), so a test can assert what the model saw.
// - A script that throws answers HTTP 500 with the message; Pi shows it as a provider error.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** One chat message as Pi sends it (content is a string or a list of parts). */
export interface ChatMessage {
  role: string;
  content?: string | { type: string; text?: string }[] | null;
  tool_calls?: { id: string; type: string; function: { name: string; arguments: string } }[];
  tool_call_id?: string;
  [key: string]: unknown;
}

/** A recorded request: its body, and views on it that scripts use most. */
export interface ModelRequest {
  /** The parsed JSON body. */
  body: { model: string; messages: ChatMessage[]; tools?: { function: { name: string } }[]; [key: string]: unknown };
  /** The system message's text ("" if none). */
  system: string;
  /** The first user message's text ("" if none): tells a session's requests apart. */
  firstUser: string;
  /** The last message (a user prompt, a tool result, a delivered custom message...). */
  last: ChatMessage | undefined;
  /** 0-based position among all requests this server got. */
  index: number;
}

export interface ToolCall {
  name: string;
  arguments: Record<string, unknown>;
  /** Default: a fresh "call_N". */
  id?: string;
}

/** What the model answers. */
export type Reply = ({ text: string } | { toolCalls: ToolCall[]; text?: string }) & {
  /** `usage.prompt_tokens` reported after the reply (default 1000). */
  promptTokens?: number;
  /** Wait this long before streaming, ms (default 0). */
  delayMs?: number;
};

export type Script = (request: ModelRequest) => Reply | Promise<Reply>;

/** Text of a message's content, parts joined with "\n". */
export function textOf(message: ChatMessage | undefined): string {
  const content = message?.content;
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((part) => part.text ?? "").join("\n");
}

const TEXT_DELTA_BYTES = 16 * 1024;

export class ScriptedModel {
  /** Every request, in arrival order. */
  readonly requests: ModelRequest[] = [];
  private calls = 0;

  private constructor(
    private readonly server: Server,
    private script: Script,
  ) {}

  static async start(script: Script): Promise<ScriptedModel> {
    let model: ScriptedModel | undefined;
    const server = createServer((request, response) => {
      void model?.handle(request, response);
    });
    model = new ScriptedModel(server, script);
    await new Promise<void>((done, fail) => {
      server.once("error", fail);
      server.listen(0, "127.0.0.1", () => done());
    });
    return model;
  }

  /** For models.json: `http://127.0.0.1:PORT/v1`. */
  get baseUrl(): string {
    const address = this.server.address() as AddressInfo;
    return `http://127.0.0.1:${address.port}/v1`;
  }

  /** Replaces the script (for the requests from now on). */
  setScript(script: Script): void {
    this.script = script;
  }

  /** Requests whose `firstUser` or `system` satisfies `match`. */
  requestsWhere(match: (request: ModelRequest) => boolean): ModelRequest[] {
    return this.requests.filter(match);
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((done) => this.server.close(() => done()));
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    if (request.method !== "POST" || !(request.url ?? "").endsWith("/chat/completions")) {
      response.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ error: { message: `no route ${request.url}` } }));
      return;
    }
    let reply: Reply;
    try {
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as ModelRequest["body"];
      const messages = body.messages ?? [];
      const recorded: ModelRequest = {
        body,
        system: textOf(messages.find((m) => m.role === "system" || m.role === "developer")),
        firstUser: textOf(messages.find((m) => m.role === "user")),
        last: messages[messages.length - 1],
        index: this.requests.length,
      };
      this.requests.push(recorded);
      reply = await this.script(recorded);
    } catch (error) {
      response.writeHead(500, { "content-type": "application/json" }).end(JSON.stringify({ error: { message: `scripted model: ${String(error)}` } }));
      return;
    }
    if (reply.delayMs !== undefined && reply.delayMs > 0) await new Promise((done) => setTimeout(done, reply.delayMs));
    this.stream(response, reply);
  }

  private stream(response: ServerResponse, reply: Reply): void {
    const id = `chatcmpl-${++this.calls}`;
    const send = (payload: unknown): void => {
      response.write(`data: ${JSON.stringify(payload)}\n\n`);
    };
    const chunk = (delta: unknown, finish: string | null = null): unknown => ({
      id,
      object: "chat.completion.chunk",
      created: Math.floor(Date.now() / 1000),
      model: "scripted",
      choices: [{ index: 0, delta, finish_reason: finish }],
    });
    response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
    send(chunk({ role: "assistant", content: "" }));
    const text = reply.text ?? "";
    for (let at = 0; at < text.length; at += TEXT_DELTA_BYTES) send(chunk({ content: text.slice(at, at + TEXT_DELTA_BYTES) }));
    const calls = "toolCalls" in reply ? reply.toolCalls : [];
    calls.forEach((call, index) => {
      const callId = call.id ?? `call_${this.calls}_${index}`;
      send(chunk({ tool_calls: [{ index, id: callId, type: "function", function: { name: call.name, arguments: JSON.stringify(call.arguments) } }] }));
    });
    send(chunk({}, calls.length > 0 ? "tool_calls" : "stop"));
    const promptTokens = reply.promptTokens ?? 1000;
    send({ id, object: "chat.completion.chunk", created: Math.floor(Date.now() / 1000), model: "scripted", choices: [], usage: { prompt_tokens: promptTokens, completion_tokens: 10, total_tokens: promptTokens + 10 } });
    response.end("data: [DONE]\n\n");
  }
}
