/**
 * The baseline: raw node:http answering precomputed bytes, the ceiling for Node on this machine.
 * bench/run.ts starts it pinned to the server's CPU and, before each scenario, sends it over IPC
 * the status, headers and body the real service answered, so both serve the same bytes.
 */
import { createServer } from 'node:http';
import type { OutgoingHttpHeaders } from 'node:http';

export interface BaselineResponse {
  status: number;
  headers: Record<string, string>;
  /** base64 */
  body: string;
}

let status = 200;
let headers: OutgoingHttpHeaders = {};
let body = Buffer.alloc(0);

const server = createServer((_request, response) => {
  response.writeHead(status, headers);
  response.end(body);
});
server.keepAliveTimeout = 60_000;

const port = Number(process.env.PORT ?? '0');
server.listen(port, '127.0.0.1', () => {
  const address = server.address();
  process.send?.({ ready: true, port: typeof address === 'object' && address ? address.port : port });
});

process.on('message', (message: { id: number; response: BaselineResponse }) => {
  status = message.response.status;
  body = Buffer.from(message.response.body, 'base64');
  headers = { ...message.response.headers, 'content-length': String(body.length) };
  process.send?.({ id: message.id, result: true });
});
process.on('disconnect', () => server.close(() => process.exit(0)));
