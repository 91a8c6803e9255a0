import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyBaseLogger, FastifyInstance, RawReplyDefaultExpression, RawRequestDefaultExpression, RawServerDefault } from 'fastify';
import type { Config } from '../config.js';
import type { CursorCodec } from '../guides/cursor.js';
import type { SearchPageRenderer } from '../representation/rendered-page.js';
import type { GuideStore } from '../store/guide-store.js';
import type { RepresentationCache } from './cache/representation-cache.js';

export type App = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  FastifyBaseLogger,
  TypeBoxTypeProvider
>;

/** What route modules get from buildApp. */
export interface RouteContext {
  config: Config;
  store: GuideStore;
  /** Renders search pages where the store searches (SQLite's search workers); absent: routes render the pages they search. */
  searchPages?: SearchPageRenderer;
  cache: RepresentationCache;
  cursorCodec: () => Promise<CursorCodec>;
}
