/**
 * A TCP proxy between the service and a real database, for tests that need the database to go
 * away (cut: the port closes and every open connection drops, as in a partition or a database
 * restart) or to become slow (hold: the database's answers are withheld until release). The
 * database server itself is never touched.
 */
import { connect, createServer } from 'node:net';
import type { Server, Socket } from 'node:net';

export interface TcpProxy {
  port: number;
  /** Closes the listening port and drops every open connection. */
  cut(): Promise<void>;
  /** Listens again on the same port. */
  restore(): Promise<void>;
  /** Withholds everything the database sends until release(). */
  hold(): void;
  /** Whether the service has sent the database bytes holding `text` since hold(): its query is then in flight. */
  hasSentSinceHold(text: string): boolean;
  release(): void;
  close(): Promise<void>;
}

export async function startTcpProxy(targetHost: string, targetPort: number): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  const held: Array<() => void> = [];
  let isHolding = false;
  let sentSinceHold = '';
  let server: Server | undefined;
  let port = 0;

  const listen = (): Promise<void> =>
    new Promise((resolve, reject) => {
      server = createServer((client) => {
        const upstream = connect(targetPort, targetHost);
        const pair = [client, upstream];
        const end = (): void => {
          for (const socket of pair) {
            socket.destroy();
            sockets.delete(socket);
          }
        };
        for (const socket of pair) {
          sockets.add(socket);
          socket.on('error', end);
          socket.on('close', end);
        }
        client.pipe(upstream);
        client.on('data', (chunk: Buffer) => {
          if (isHolding) sentSinceHold += chunk.toString('latin1');
        });
        upstream.on('data', (chunk: Buffer) => {
          if (isHolding) held.push(() => client.write(chunk));
          else client.write(chunk);
        });
      });
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        port = (server!.address() as { port: number }).port;
        resolve();
      });
    });

  const cut = (): Promise<void> =>
    new Promise((resolve) => {
      for (const socket of sockets) socket.destroy();
      sockets.clear();
      held.length = 0;
      if (!server?.listening) return resolve();
      server.close(() => resolve());
    });

  await listen();
  return {
    get port() {
      return port;
    },
    cut,
    restore: listen,
    hold() {
      isHolding = true;
      sentSinceHold = '';
    },
    hasSentSinceHold: (text) => sentSinceHold.includes(text),
    release() {
      isHolding = false;
      for (const write of held.splice(0)) write();
    },
    close: cut,
  };
}

/** The URL `databaseUrl` becomes when it goes through `proxy`. */
export function throughProxy(databaseUrl: string, proxy: TcpProxy): string {
  const url = new URL(databaseUrl);
  url.hostname = '127.0.0.1';
  url.port = String(proxy.port);
  return url.toString();
}
