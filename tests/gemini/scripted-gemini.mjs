// A scripted Gemini API on 127.0.0.1 for running a real Gemini CLI 0.61.0 with no network.
//
// Gemini CLI (GOOGLE_GEMINI_BASE_URL, an API key) streams every model request as
// `POST /v1beta/models/MODEL:streamGenerateContent?alt=sse` and reads SSE chunks of
// GenerateContentResponse; it may also ask `:countTokens` and `:generateContent`. A test gives a
// `respond(request)` function returning the next answer:
//   { text }                            a final model message
//   { calls: [{ name, args }] }         function calls, run by Gemini CLI in parallel
// optionally with `usage` ({ promptTokenCount, candidatesTokenCount, totalTokenCount }).
import http from 'node:http';

// The names of the functions a request offers.
export function toolNames(request) {
  return (request.tools ?? []).flatMap((t) => (t.functionDeclarations ?? []).map((f) => f.name));
}

// The function responses of the request's last user turn (what the last calls returned).
export function lastResponses(request) {
  const last = (request.contents ?? []).at(-1);
  if (!last || last.role !== 'user') return [];
  return (last.parts ?? []).filter((p) => p.functionResponse).map((p) => p.functionResponse);
}

export async function startScriptedGemini(respond) {
  const requests = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c) => (body += c));
    req.on('end', async () => {
      let request = {};
      try {
        request = body ? JSON.parse(body) : {};
      } catch {}
      if (req.url.includes(':countTokens')) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ totalTokens: Math.ceil(body.length / 4) }));
        return;
      }
      requests.push({ url: req.url, body: request });
      let answer;
      try {
        answer = await respond(request, req.url);
      } catch (e) {
        answer = { text: `scripted model failed: ${e.message}` };
      }
      if (typeof answer === 'string') answer = { text: answer };
      const parts = [];
      if (answer.text !== undefined) parts.push({ text: answer.text });
      for (const c of answer.calls ?? []) parts.push({ functionCall: { name: c.name, args: c.args } });
      const prompt = Math.ceil(body.length / 4);
      const usageMetadata = answer.usage ?? { promptTokenCount: prompt, candidatesTokenCount: 10, totalTokenCount: prompt + 10 };
      const chunk = { candidates: [{ content: { role: 'model', parts }, finishReason: 'STOP', index: 0 }], usageMetadata, modelVersion: 'gemini-2.5-flash' };
      if (req.url.includes(':streamGenerateContent')) {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.end(`data: ${JSON.stringify(chunk)}\r\n\r\n`);
      } else {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(chunk));
      }
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${server.address().port}`, requests, close: () => new Promise((r) => server.close(r)) };
}
