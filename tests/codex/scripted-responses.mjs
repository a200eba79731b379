// A scripted OpenAI Responses API on 127.0.0.1 for running a real Codex CLI with no network.
//
// Codex streams every model request (`POST /v1/responses`, `stream: true`) and reads SSE events;
// it may also ask `GET /v1/models`. A test gives a `respond(request)` function (may be async) that
// looks at the request (who is asking, what came back from the last tool calls) and returns the
// next answer:
//   { text }                                  a final assistant message
//   { calls: [{ name, namespace?, arguments, call_id? }] }  function calls (arguments: object or JSON text)
//   { text, calls }                           both (text first)
//   { error: { status, message } }            an HTTP error instead of a stream
// optionally with `usage` ({ input_tokens, output_tokens, cached_tokens }), as the rollout's
// token_count events will record it. A bare string is `{ text }`.
//
// Codex 0.169.0 offers an MCP server's tools in a `{type: "namespace", name: "mcp__SERVER",
// tools: [...]}` entry of the request's `tools`; the model calls one with a function_call item
// carrying `namespace: "mcp__SERVER"` and `name: "TOOL"` (mcpCall() builds it).
import http from 'node:http';

// Plausible token count: one token per 4 ASCII bytes, one per other character.
export function countTokens(value) {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  let ascii = 0;
  let other = 0;
  for (const ch of text) {
    if (ch.codePointAt(0) < 0x80) ascii++;
    else other++;
  }
  return Math.ceil(ascii / 4) + other;
}

// The text of a message item's content (input_text / output_text parts, or a string).
export function contentText(content) {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((p) => (typeof p?.text === 'string' ? p.text : '')).join('');
}

// The user messages of a request, as text, in order (Codex adds its own: AGENTS.md,
// <environment_context>, ...; the prompt of `codex exec PROMPT` is one of them).
export function userTexts(request) {
  return (request.input ?? []).filter((i) => i.type === 'message' && i.role === 'user').map((i) => contentText(i.content));
}

// Whether the request belongs to a conversation whose user prompt contains `marker` (a string or
// a RegExp): tells a child `codex exec` (its own prompt) from the parent.
export function hasPrompt(request, marker) {
  return userTexts(request).some((t) => (typeof marker === 'string' ? t.includes(marker) : marker.test(t)));
}

// The newest user prompt of the request (the last user message that is not Codex's own context).
export function lastPrompt(request) {
  const texts = userTexts(request).filter((t) => !/^\s*<(environment_context|user_instructions|permissions|INSTRUCTIONS)/.test(t) && !t.startsWith('# AGENTS.md'));
  return texts.at(-1) ?? '';
}

// The response (1, 2, ...) each call_id this model made was in, so that callOutputs() can tell
// the newest batch of calls from earlier ones.
const callBatch = new Map();

const isOutput = (it) => it.type === 'function_call_output' || it.type === 'custom_tool_call_output';
const isCall = (it) => it.type === 'function_call' || it.type === 'custom_tool_call';

// The trailing run of call / output / reasoning items of a request (after its last message).
export function newestItems(request) {
  const input = request.input ?? [];
  let j = input.length - 1;
  while (j >= 0 && (isOutput(input[j]) || isCall(input[j]) || input[j].type === 'reasoning')) j--;
  return input.slice(j + 1);
}

// The text of a function_call_output's `output` (a string, or content items with `text`).
export function outputText(output) {
  if (typeof output === 'string') return output;
  if (Array.isArray(output)) return output.map((p) => p?.text ?? '').join('');
  if (output && typeof output === 'object') {
    if (typeof output.content === 'string') return output.content;
    if (Array.isArray(output.content)) return outputText(output.content);
  }
  return '';
}

// The latest function_call_output items (those answering the newest batch of calls this model
// made), by call_id: Map(call_id -> { text, raw, call }) where `call` is the function_call item
// as Codex sent it back.
export function callOutputs(request) {
  const input = request.input ?? [];
  const calls = new Map();
  for (const it of input) if (isCall(it)) calls.set(it.call_id, it);
  let outputs = input.filter(isOutput);
  const batches = outputs.map((o) => callBatch.get(o.call_id)).filter((b) => b !== undefined);
  if (batches.length) {
    const newest = Math.max(...batches);
    outputs = outputs.filter((o) => callBatch.get(o.call_id) === newest);
  } else {
    outputs = newestItems(request).filter(isOutput);
  }
  const out = new Map();
  for (const o of outputs) out.set(o.call_id, { text: outputText(o.output), raw: o.output, call: calls.get(o.call_id) });
  return out;
}

// Every function_call_output of the request (whole conversation), in order.
export function allCallOutputs(request) {
  return (request.input ?? []).filter((it) => it.type === 'function_call_output' || it.type === 'custom_tool_call_output')
    .map((it) => ({ call_id: it.call_id, text: outputText(it.output), raw: it.output }));
}

// The tools offered in the request: [{ name, namespace?, type, parameters }] flattened (a
// `namespace` tool's inner tools get their namespace).
// A catalog model (e.g. `gpt-6.1-sol`) gets no top-level `tools`: an `additional_tools` input item
// holds them, and MCP servers appear only as "Deferred tool namespaces" in a developer message.
export function offeredTools(request) {
  const out = [];
  const all = [...(request.tools ?? []), ...(request.input ?? []).filter((i) => i.type === 'additional_tools').flatMap((i) => i.tools ?? [])];
  for (const t of all) {
    if (t.type === 'namespace' && Array.isArray(t.tools)) {
      for (const inner of t.tools) out.push({ ...inner, namespace: t.name });
    } else out.push(t);
  }
  return out;
}

// A call of MCP server `server`'s tool `tool`: Codex 0.169.0 offers it inside the namespace tool
// `mcp__SERVER`, and runs it only when the call names that namespace (a call named
// `mcp__SERVER__TOOL` without it gets "unsupported call: mcp__SERVER__TOOL").
export function mcpCall(server, tool, args, { call_id } = {}) {
  return { namespace: `mcp__${server}`, name: tool, arguments: args, ...(call_id ? { call_id } : {}) };
}

// A call of a tool by its full name as the request offers it (`exec_command`, or a namespaced
// one as namespace + name joined, `mcp__probe` + `big` = `mcp__probebig`, or with `__` between
// them, `mcp__probe__big`): sets `namespace` when the tool is in one.
export function toolCall(request, fullName, args, { call_id } = {}) {
  for (const t of offeredTools(request)) {
    if (t.namespace && (t.namespace + t.name === fullName || `${t.namespace}__${t.name}` === fullName)) {
      return { namespace: t.namespace, name: t.name, arguments: args, ...(call_id ? { call_id } : {}) };
    }
  }
  return { name: fullName, arguments: args, ...(call_id ? { call_id } : {}) };
}

function sse(res, data) {
  res.write(`event: ${data.type}\ndata: ${JSON.stringify(data)}\n\n`);
}

let nextId = 1;
let responses = 0;

function normalise(answer) {
  if (typeof answer === 'string') return { text: answer };
  return answer ?? { text: '' };
}

function stream(res, request, answer) {
  const u = answer.usage ?? {};
  const input_tokens = u.input_tokens ?? countTokens({ input: request.input ?? [], instructions: request.instructions ?? '' });
  const output_tokens = u.output_tokens ?? Math.max(1, countTokens(answer.text ?? '') + countTokens(answer.calls ?? []));
  const usage = {
    input_tokens,
    input_tokens_details: { cached_tokens: u.cached_tokens ?? 0 },
    output_tokens,
    output_tokens_details: { reasoning_tokens: u.reasoning_tokens ?? 0 },
    total_tokens: input_tokens + output_tokens,
  };
  const responseId = `resp_${nextId++}`;
  const responseNumber = ++responses;
  const base = { id: responseId, object: 'response', created_at: Math.floor(Date.now() / 1000), model: request.model, status: 'in_progress', output: [] };
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  let seq = 0;
  const ev = (data) => sse(res, { ...data, sequence_number: seq++ });
  ev({ type: 'response.created', response: base });
  ev({ type: 'response.in_progress', response: base });
  const output = [];
  let index = 0;
  if (answer.text !== undefined) {
    const itemId = `msg_${nextId++}`;
    const text = answer.text;
    ev({ type: 'response.output_item.added', output_index: index, item: { id: itemId, type: 'message', status: 'in_progress', role: 'assistant', content: [] } });
    ev({ type: 'response.content_part.added', item_id: itemId, output_index: index, content_index: 0, part: { type: 'output_text', text: '', annotations: [] } });
    for (let at = 0; at < text.length || at === 0; at += 16384) {
      ev({ type: 'response.output_text.delta', item_id: itemId, output_index: index, content_index: 0, delta: text.slice(at, at + 16384) });
      if (text.length === 0) break;
    }
    ev({ type: 'response.output_text.done', item_id: itemId, output_index: index, content_index: 0, text });
    const part = { type: 'output_text', text, annotations: [] };
    ev({ type: 'response.content_part.done', item_id: itemId, output_index: index, content_index: 0, part });
    const item = { id: itemId, type: 'message', status: 'completed', role: 'assistant', content: [part] };
    ev({ type: 'response.output_item.done', output_index: index, item });
    output.push(item);
    index++;
  }
  for (const c of answer.calls ?? []) {
    const itemId = `fc_${nextId++}`;
    const callId = c.call_id ?? `call_${String(nextId++).padStart(6, '0')}`;
    callBatch.set(callId, responseNumber);
    const args = typeof c.arguments === 'string' ? c.arguments : JSON.stringify(c.arguments ?? {});
    const item = { id: itemId, type: 'function_call', status: 'completed', name: c.name, ...(c.namespace ? { namespace: c.namespace } : {}), call_id: callId, arguments: args };
    ev({ type: 'response.output_item.added', output_index: index, item: { ...item, status: 'in_progress', arguments: '' } });
    ev({ type: 'response.function_call_arguments.delta', item_id: itemId, output_index: index, delta: args });
    ev({ type: 'response.function_call_arguments.done', item_id: itemId, output_index: index, arguments: args });
    ev({ type: 'response.output_item.done', output_index: index, item });
    output.push(item);
    index++;
  }
  // A freeform tool's call (code mode's `exec`: `input` is the JavaScript), answered by a
  // custom_tool_call_output.
  for (const c of answer.custom ?? []) {
    const itemId = `ctc_${nextId++}`;
    const callId = c.call_id ?? `call_${String(nextId++).padStart(6, '0')}`;
    callBatch.set(callId, responseNumber);
    const item = { id: itemId, type: 'custom_tool_call', status: 'completed', name: c.name, call_id: callId, input: c.input };
    ev({ type: 'response.output_item.added', output_index: index, item: { ...item, status: 'in_progress', input: '' } });
    ev({ type: 'response.custom_tool_call_input.delta', item_id: itemId, output_index: index, delta: c.input });
    ev({ type: 'response.custom_tool_call_input.done', item_id: itemId, output_index: index, input: c.input });
    ev({ type: 'response.output_item.done', output_index: index, item });
    output.push(item);
    index++;
  }
  ev({ type: 'response.completed', response: { ...base, status: 'completed', output, usage } });
  res.end();
}

// Starts the model. Resolves to { url, baseUrl, port, requests, log, close }: `requests` holds
// every /v1/responses body, `log` every request as { method, path, headers, body, at }.
export async function startModel(respond) {
  const requests = [];
  const log = [];
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', async () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      let body = {};
      try {
        body = raw ? JSON.parse(raw) : {};
      } catch {
        res.writeHead(400).end();
        return;
      }
      const path = (req.url ?? '').split('?')[0];
      log.push({ method: req.method, path, headers: req.headers, body, at: Date.now() });
      if (req.method === 'GET' && path === '/v1/models') {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ object: 'list', data: [], models: [] }));
        return;
      }
      if (req.method === 'POST' && path === '/v1/responses') {
        Object.defineProperty(body, 'headers', { value: req.headers, enumerable: false });
        requests.push(body);
        let answer;
        try {
          answer = normalise(await respond(body));
        } catch (e) {
          answer = { error: { status: 500, message: String(e?.stack ?? e) } };
        }
        if (answer.error) {
          res.writeHead(answer.error.status ?? 500, { 'content-type': 'application/json' })
            .end(JSON.stringify({ error: { type: answer.error.type ?? 'server_error', code: answer.error.code ?? null, message: answer.error.message ?? 'scripted error' } }));
          return;
        }
        if (body.stream === false) {
          res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({
            id: `resp_${nextId++}`, object: 'response', status: 'completed', model: body.model,
            output: [{ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: answer.text ?? '' }] }],
            usage: { input_tokens: 10, output_tokens: 10, total_tokens: 20 },
          }));
          return;
        }
        stream(res, body, answer);
        return;
      }
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: `not found: ${req.method} ${path}` } }));
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    log,
    close: () => new Promise((resolve) => { server.closeAllConnections?.(); server.close(resolve); }),
  };
}
