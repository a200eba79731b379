// A scripted Anthropic Messages API on 127.0.0.1 for running a real Claude Code with no network.
//
// Claude Code streams every request (`POST /v1/messages?beta=true`, `stream: true`) and sizes its
// own limits with `POST /v1/messages/count_tokens`; both are answered here. A test gives a
// `respond(request)` function that looks at the request (who is asking, what came back from the
// last tools) and returns the next assistant message: `{ text }` or `{ tools: [{ name, input }] }`,
// optionally with `usage` (`input_tokens`, ... as the transcript will record them).
import http from 'node:http';

// Plausible token count, as the real API would give it roughly: one token per 4 ASCII bytes and
// one per non-ASCII character (CJK is about one token a character). Never "100 for everything":
// that would hide Claude Code's size limits.
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

// The text of one message's content (a string, or blocks of text / tool_result).
export function contentText(content) {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((b) => {
      if (b.type === 'text') return b.text;
      if (b.type === 'tool_result') return contentText(b.content);
      return '';
    })
    .join('\n');
}

// Everything after the last assistant message: Claude Code may send several user (and system)
// messages in a row, tool results and nudges, so the newest turn is all of them.
export function newestTurn(request) {
  const messages = request.messages ?? [];
  let i = messages.length - 1;
  while (i >= 0 && messages[i].role !== 'assistant') i--;
  return messages.slice(i + 1);
}

// tool_result blocks of the newest turn, by tool_use_id.
export function toolResults(request) {
  const results = new Map();
  for (const m of newestTurn(request)) {
    if (!Array.isArray(m.content)) continue;
    for (const b of m.content) {
      if (b.type === 'tool_result') results.set(b.tool_use_id, { text: contentText(b.content), isError: !!b.is_error });
    }
  }
  return results;
}

export function firstUserText(request) {
  const first = (request.messages ?? []).find((m) => m.role === 'user');
  return first ? contentText(first.content) : '';
}

function sse(res, event, data) {
  res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
}

let nextId = 1;

// Auto mode asks the API to review each tool call (`safeguards`); the real API answers in
// `message_delta` with every tool use evaluated. `review: 'server'` answers so (no prompts);
// `review: 'none'` leaves it out, as an API that cannot review would, and Claude Code falls back
// to its own local check (a side request answered by `respond` like any other).
function safeguardResults(request, toolIds) {
  if (!Array.isArray(request.safeguards) || request.safeguards.length === 0) return undefined;
  const tool_uses = Object.fromEntries(toolIds.map((id) => [id, { type: 'evaluated', outcome: 'not_flagged' }]));
  return request.safeguards.map((g) => ({ type: g.type, status: { type: 'available', tool_uses } }));
}

function stream(res, request, answer, review) {
  const usage = { input_tokens: 1000, output_tokens: 10, cache_read_input_tokens: 0, cache_creation_input_tokens: 0, ...(answer.usage ?? {}) };
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const id = `msg_${nextId++}`;
  sse(res, 'message_start', {
    type: 'message_start',
    message: { id, type: 'message', role: 'assistant', model: request.model, content: [], stop_reason: null, stop_sequence: null, usage },
  });
  let index = 0;
  if (answer.text !== undefined) {
    sse(res, 'content_block_start', { type: 'content_block_start', index, content_block: { type: 'text', text: '' } });
    // Deltas of at most 16 KiB, as a real stream would.
    for (let at = 0; at < answer.text.length; at += 16384) {
      sse(res, 'content_block_delta', { type: 'content_block_delta', index, delta: { type: 'text_delta', text: answer.text.slice(at, at + 16384) } });
    }
    sse(res, 'content_block_stop', { type: 'content_block_stop', index });
    index++;
  }
  const toolIds = [];
  for (const tool of answer.tools ?? []) {
    const toolId = tool.id ?? `toolu_${String(nextId++).padStart(6, '0')}`;
    toolIds.push(toolId);
    sse(res, 'content_block_start', { type: 'content_block_start', index, content_block: { type: 'tool_use', id: toolId, name: tool.name, input: {} } });
    sse(res, 'content_block_delta', { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: JSON.stringify(tool.input) } });
    sse(res, 'content_block_stop', { type: 'content_block_stop', index });
    index++;
  }
  sse(res, 'message_delta', {
    type: 'message_delta',
    delta: {
      stop_reason: answer.tools?.length ? 'tool_use' : 'end_turn', stop_sequence: null,
      ...(review === 'server' && safeguardResults(request, toolIds) ? { safeguard_results: safeguardResults(request, toolIds) } : {}),
    },
    usage: { output_tokens: usage.output_tokens },
  });
  sse(res, 'message_stop', { type: 'message_stop' });
  res.end();
}

// Starts the model. `respond(request)` may be async. Resolves to { url, requests, close }; every
// /v1/messages request body is kept in `requests` for the test to look at.
export async function startModel(respond, { review = 'server' } = {}) {
  const requests = [];
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', async () => {
      let body = {};
      try {
        body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : {};
      } catch {
        res.writeHead(400).end();
        return;
      }
      const path = (req.url ?? '').split('?')[0];
      if (req.method === 'POST' && path === '/v1/messages/count_tokens') {
        const tokens = countTokens({ system: body.system ?? '', messages: body.messages ?? [], tools: body.tools ?? [] });
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ input_tokens: tokens }));
        return;
      }
      if (req.method === 'POST' && path === '/v1/messages') {
        requests.push(body);
        try {
          const answer = await respond(body);
          if (body.stream === false) {
            res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({
              id: `msg_${nextId++}`, type: 'message', role: 'assistant', model: body.model,
              content: [{ type: 'text', text: answer.text ?? '' }], stop_reason: 'end_turn', stop_sequence: null,
              usage: { input_tokens: 10, output_tokens: 10 },
            }));
            return;
          }
          stream(res, body, answer, review);
        } catch (e) {
          res.writeHead(500, { 'content-type': 'application/json' })
            .end(JSON.stringify({ type: 'error', error: { type: 'api_error', message: String(e?.stack ?? e) } }));
        }
        return;
      }
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ type: 'error', error: { type: 'not_found_error', message: path } }));
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () => new Promise((resolve) => { server.closeAllConnections?.(); server.close(resolve); }),
  };
}
