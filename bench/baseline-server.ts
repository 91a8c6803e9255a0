/**
 * The baseline: raw node:http answering precomputed bytes, the ceiling for Node on this machine.
 * bench/run.ts starts it pinned to the server's CPU and, before each scenario, sends it over IPC
 * the status, headers and body the real service answered to each of a few of the scenario's paths,
 * so both serve the same bytes (a path it was not given gets the first answer).
 */
import { createServer } from 'node:http';
import type { OutgoingHttpHeaders } from 'node:http';

export interface BaselineResponse {
  status: number;
  headers: Record<string, string>;
  /** base64 */
  body: string;
}

interface Answer {
  status: number;
  headers: OutgoingHttpHeaders;
  body: Buffer;
}

let answers = new Map<string, Answer>();
let fallback: Answer = { status: 200, headers: {}, body: Buffer.alloc(0) };

const server = createServer((request, response) => {
  const answer = answers.get(request.url ?? '') ?? fallback;
  response.writeHead(answer.status, answer.headers);
  response.end(answer.body);
});
server.keepAliveTimeout = 60_000;

const port = Number(process.env.PORT ?? '0');
server.listen(port, '127.0.0.1', () => {
  const address = server.address();
  process.send?.({ ready: true, port: typeof address === 'object' && address ? address.port : port });
});

process.on('message', (message: { id: number; responses: { path: string; response: BaselineResponse }[] }) => {
  answers = new Map();
  for (const { path, response } of message.responses) {
    const body = Buffer.from(response.body, 'base64');
    if (!answers.has(path))
      answers.set(path, { status: response.status, headers: { ...response.headers, 'content-length': String(body.length) }, body });
  }
  fallback = answers.values().next().value ?? fallback;
  process.send?.({ id: message.id, result: true });
});
process.on('disconnect', () => server.close(() => process.exit(0)));
