/**
 * The soak's load generator (scripts/soak.ts): closed-loop clients on keep-alive connections,
 * optionally spread over many loopback source addresses so that the server counts them as
 * different clients.
 */
import http from 'node:http';

/** The source address of client `i` (0-based): 127.0.0.2 and up, across the loopback /8. */
function clientAddress(i: number): string {
  const n = i + 2;
  return `127.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`;
}

/**
 * Closed-loop load: `connections` clients on keep-alive sockets, each sending its next request as
 * soon as the previous answer arrives, until `seconds` have passed. With `clients`, the
 * connections come from that many source addresses (round robin), else all from 127.0.0.1. Every
 * answer is reported with what was asked, its status, its latency and whether it carried
 * Retry-After. With `honourRetryAfter`, a client told to retry a kind of request later sends other
 * kinds meanwhile (as a well-behaved client does); without it, it goes on regardless (a flood).
 */
export async function closedLoopLoad(options: {
  base: string;
  connections: number;
  seconds: number;
  next: () => { path: string; kind: string };
  honourRetryAfter?: boolean;
  clients?: number;
  onResult: (kind: string, status: number, latencyMs: number, at: number, retryAfter: boolean) => void;
}): Promise<{ errors: number; requests: number; errorSamples: string[]; partial: number }> {
  const clients = options.clients ?? 0;
  const agents =
    clients === 0
      ? [new http.Agent({ keepAlive: true, maxSockets: options.connections })]
      : Array.from(
          { length: clients },
          (_, i) =>
            new http.Agent({ keepAlive: true, maxSockets: Math.ceil(options.connections / clients), localAddress: clientAddress(i) }),
        );
  const { hostname, port } = new URL(options.base);
  const deadline = performance.now() + options.seconds * 1000;
  let errors = 0;
  let requests = 0;
  let partial = 0;
  const errorSamples: string[] = [];
  const one = (agent: http.Agent, requestPath: string): Promise<{ status: number; retryAfter: string | undefined }> =>
    new Promise((resolve, reject) => {
      const request = http.get(
        { agent, hostname, port, path: requestPath, headers: { 'accept-encoding': 'gzip, br' }, timeout: 10_000 },
        (response) => {
          response.resume();
          response.on('end', () => resolve({ status: response.statusCode ?? 0, retryAfter: response.headers['retry-after'] }));
          // An answer that started and did not finish: the server dropped a request it had accepted.
          response.on('aborted', () => {
            partial += 1;
          });
          response.on('error', reject);
        },
      );
      request.on('timeout', () => request.destroy(new Error('timeout after 10 s')));
      request.on('error', reject);
    });
  await Promise.all(
    Array.from({ length: options.connections }, async (_, connection) => {
      const agent = agents[connection % agents.length]!;
      const retryAt = new Map<string, number>();
      while (performance.now() < deadline) {
        let { path: requestPath, kind } = options.next();
        for (let tries = 0; tries < 20 && (retryAt.get(kind) ?? 0) > performance.now(); tries += 1)
          ({ path: requestPath, kind } = options.next());
        const started = performance.now();
        try {
          const { status, retryAfter } = await one(agent, requestPath);
          if (options.honourRetryAfter && retryAfter) retryAt.set(kind, performance.now() + 1000 * Number(retryAfter));
          requests += 1;
          options.onResult(kind, status, performance.now() - started, started, retryAfter !== undefined);
        } catch (error) {
          errors += 1;
          if (errorSamples.length < 5) errorSamples.push(`${kind}: ${(error as Error).message}`);
        }
      }
    }),
  );
  for (const agent of agents) agent.destroy();
  return { errors, requests, errorSamples, partial };
}
