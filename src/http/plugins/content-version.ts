/**
 * The content version: read at start and every CONTENT_POLL_MS, so that every instance sharing a
 * database sees an import within a poll; `app.refreshContentVersion()` reads it at once (after an
 * import in the same process). A new version calls `onChange` (drop cached responses, re-read the
 * cursor key).
 */
import type { FastifyInstance } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import { loadRepresentationHash } from '../../representation/representation.js';
import type { GuideStore } from '../../store/guide-store.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** Reads the content version now (instead of at the next poll) and drops stale cached responses. */
    refreshContentVersion(): Promise<number>;
  }
}

export interface ContentVersionOptions {
  store: GuideStore;
  pollMs: number;
  onChange: () => void;
}

/** Registers the poll and the decorator; returns the version last read (0 before the first read). */
export function registerContentVersion(app: FastifyInstance, { store, pollMs, onChange }: ContentVersionOptions): () => number {
  let contentVersion = 0;
  const refreshContentVersion = async (): Promise<number> => {
    const version = await store.contentVersion();
    if (version !== contentVersion) {
      contentVersion = version;
      onChange();
    }
    return version;
  };
  app.decorate('refreshContentVersion', refreshContentVersion);
  app.register(
    fastifyPlugin(async (instance) => {
      let poll: NodeJS.Timeout | undefined;
      instance.addHook('onReady', async () => {
        // The ETags' hash (representation.ts): loaded before the first request, and a failure stops the start.
        await loadRepresentationHash();
        await refreshContentVersion().catch((err: unknown) => instance.log.warn({ err }, 'content version unavailable at start'));
        poll = setInterval(() => {
          refreshContentVersion().catch((err: unknown) => instance.log.warn({ err }, 'content version check failed'));
        }, pollMs);
        poll.unref();
      });
      instance.addHook('onClose', async () => clearInterval(poll));
    }),
  );
  return () => contentVersion;
}
