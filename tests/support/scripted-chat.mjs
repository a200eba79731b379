// A scripted OpenAI Chat Completions API on 127.0.0.1 for running a real harness with no network:
// opencode 1.18.33 (its provider `@ai-sdk/openai-compatible`, `baseURL` http://127.0.0.1:PORT/v1)
// and GitHub Copilot CLI 1.0.102 (COPILOT_PROVIDER_TYPE=openai, COPILOT_PROVIDER_BASE_URL).
//
// Both stream every model request (`POST /v1/chat/completions`, `stream: true`) and read SSE
// chunks. A test gives a `respond(request)` function (may be async) that looks at the request
// (whose conversation it is, what the last tool calls returned) and returns the next answer:
//   { text }                              a final assistant message
//   { calls: [{ name, arguments }] }      tool calls (arguments: an object or JSON text)
// optionally with `usage` ({ prompt_tokens, completion_tokens }), or
//   { status, error }                     an HTTP error (status >= 400) with that message
// A bare string is `{ text }`.
// Requests it cannot place (opencode's title generation, ...) get a short text. Node built-ins only.
import http from 'node:http';

// The text of a message's content (a string, or parts with `text`).
export function contentText(content) {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((p) => (typeof p?.text === 'string' ? p.text : '')).join('');
}

// The user messages of a request, as text, in order.
export function userTexts(request) {
  return (request.messages ?? []).filter((m) => m.role === 'user').map((m) => contentText(m.content));
}

// Whether the request's first user message (the conversation's prompt) contains `marker`: tells
// a child session (its task's prompt) from the parent.
export function promptHas(request, marker) {
  const first = userTexts(request)[0] ?? '';
  return first.includes(marker);
}

// The tool results after the last assistant message with tool calls, in call order:
// [{ id, name, text }].
export function lastToolResults(request) {
  const messages = request.messages ?? [];
  let i = messages.length - 1;
  while (i >= 0 && messages[i].role === 'tool') i--;
  const calls = new Map();
  for (const c of messages[i]?.tool_calls ?? []) calls.set(c.id, c.function?.name);
  return messages.slice(i + 1).map((m) => ({ id: m.tool_call_id, name: calls.get(m.tool_call_id), text: contentText(m.content) }));
}

// How many assistant turns the conversation already has.
export function assistantTurns(request) {
  return (request.messages ?? []).filter((m) => m.role === 'assistant').length;
}

let nextId = 1;

function chunk(model, delta, finish = null, usage = undefined) {
  const c = { id: 'chatcmpl-scripted', object: 'chat.completion.chunk', created: 1, model, choices: [{ index: 0, delta, finish_reason: finish }] };
  if (usage) c.usage = usage;
  return `data: ${JSON.stringify(c)}\n\n`;
}

// A parent's script for startModel, in steps: `steps[N]` answers the parent's turn N with the tool
// results of turn N-1 ([{ id, name, text }], in call order; [] at turn 0) and returns { calls } or
// { text }; past the last step the parent says "done". A child answers from `answers` by the
// marker its prompt holds (followed by `markerEnd`); a request of neither (the harness's own:
// titles...) gets `other`. `usage`, when given, goes with every parent answer. `seen` keeps every
// turn's tool results. Returns { respond, seen }.
export function parentScript(steps, answers, { other = 'ok', usage = undefined, markerEnd = '' } = {}) {
  const seen = [];
  const respond = (request) => {
    for (const [marker, answer] of Object.entries(answers)) if (promptHas(request, marker + markerEnd)) return { text: answer };
    if (!promptHas(request, 'PARENT')) return { text: other };
    const turn = assistantTurns(request);
    if (turn > 0) seen.push(lastToolResults(request));
    const step = steps[turn];
    return { ...(step ? step(turn > 0 ? seen.at(-1) : []) : { text: 'done' }), usage };
  };
  return { respond, seen };
}

// Starts the server; resolves to { baseUrl, requests, close() }. `requests` records every
// request body, parsed.
export async function startModel(respond) {
  const requests = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (d) => { body += d; });
    req.on('end', async () => {
      if (req.method === 'GET') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ object: 'list', data: [{ id: 'scripted-1', object: 'model' }] }));
        return;
      }
      let request;
      try { request = JSON.parse(body); } catch { res.writeHead(400); res.end(); return; }
      requests.push(request);
      let answer;
      try {
        answer = await respond(request);
      } catch (e) {
        answer = { text: `scripted model error: ${e.message}` };
      }
      if (answer === undefined || answer === null) answer = { text: 'ok' };
      if (typeof answer === 'string') answer = { text: answer };
      if (answer.status >= 400) {
        res.writeHead(answer.status, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: answer.error ?? 'scripted error', type: 'invalid_request_error' } }));
        return;
      }
      const model = request.model ?? 'scripted-1';
      const usage = { prompt_tokens: 1000, completion_tokens: 10, total_tokens: 1010, ...(answer.usage ?? {}) };
      if (!request.stream) {
        const message = { role: 'assistant', content: answer.text ?? null };
        if (answer.calls) message.tool_calls = answer.calls.map((c) => ({ id: `call_${nextId++}`, type: 'function', function: { name: c.name, arguments: typeof c.arguments === 'string' ? c.arguments : JSON.stringify(c.arguments) } }));
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ id: 'chatcmpl-scripted', object: 'chat.completion', created: 1, model, choices: [{ index: 0, message, finish_reason: answer.calls ? 'tool_calls' : 'stop' }], usage }));
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
      res.write(chunk(model, { role: 'assistant', content: '' }));
      if (answer.text) res.write(chunk(model, { content: answer.text }));
      (answer.calls ?? []).forEach((c, index) => {
        const args = typeof c.arguments === 'string' ? c.arguments : JSON.stringify(c.arguments);
        res.write(chunk(model, { tool_calls: [{ index, id: `call_${nextId++}`, type: 'function', function: { name: c.name, arguments: args } }] }));
      });
      res.write(chunk(model, {}, answer.calls?.length ? 'tool_calls' : 'stop'));
      res.write(chunk(model, {}, null, usage).replace('"choices":[{"index":0,"delta":{},"finish_reason":null}]', '"choices":[]'));
      res.end('data: [DONE]\n\n');
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () => new Promise((resolve) => { server.closeAllConnections?.(); server.close(resolve); }),
  };
}
