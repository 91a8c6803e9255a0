/**
 * Response serializers compiled when first needed, not while the service starts. Fastify compiles
 * a fast-json-stringify serializer for every response schema of every route (each status code:
 * 200, 304, 400, 404, 406, 429, 503, …) before it listens, and each compilation builds its own Ajv
 * instance: a fifth of the start-up (docs/performance.md), for serializers most of which (the
 * error statuses) a process may never use.
 *
 * Each route gets a function that compiles its serializer on its first call. Once the server
 * listens, the ones still pending are compiled one per event-loop turn, so a request arriving in
 * between waits for at most one compilation, and the first answer of a route seldom pays.
 * The serializers are exactly Fastify's own (the default compiler, same options, same shared
 * schemas): only the moment of compilation moves.
 */
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';
import type { Serializer, SerializerFactory } from '@fastify/fast-json-stringify-compiler';
import type { FastifyInstance } from 'fastify';

export interface LazySerializers {
  /** For Fastify's `schemaController.compilersFactory.buildSerializer`. */
  buildSerializer: SerializerFactory;
  /** Compiles the pending serializers one per event-loop turn after the server listens. */
  compileAfterListen(app: FastifyInstance): void;
  /** Serializers not compiled yet. */
  pending(): number;
}

export function createLazySerializers(): LazySerializers {
  const buildFactory = SerializerSelector();
  const pending = new Set<() => void>();

  return {
    buildSerializer(externalSchemas, serializerOptions) {
      const compile = buildFactory(externalSchemas, serializerOptions);
      return (route) => {
        let serialize: Serializer | undefined;
        const ensure = (): Serializer => {
          if (serialize === undefined) {
            serialize = compile(route);
            pending.delete(ensure);
          }
          return serialize;
        };
        pending.add(ensure);
        return (data) => ensure()(data);
      };
    },
    compileAfterListen(app) {
      let timer: NodeJS.Immediate | undefined;
      const next = (): void => {
        const first = pending.values().next();
        if (first.done === true) return;
        try {
          first.value();
        } catch (err) {
          // A schema fast-json-stringify cannot compile: that route's answers fail with it too (a 500).
          pending.delete(first.value);
          app.log.error({ err }, 'a response serializer failed to compile');
        }
        timer = setImmediate(next);
      };
      app.addHook('onListen', async () => {
        timer = setImmediate(next);
      });
      app.addHook('onClose', async () => clearImmediate(timer));
    },
    pending: () => pending.size,
  };
}
