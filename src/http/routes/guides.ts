import type { FastifyReply, FastifyRequest, preValidationHookHandler } from 'fastify';
import type { CursorPayload } from '../../guides/cursor.js';
import type { GuideDetailData } from '../../guides/guide.js';
import { parseSearchQuery } from '../../guides/search-query.js';
import { InvalidCursorError, NotFoundError } from '../problems.js';
import { GuideDetailSchema, GuideListQuerySchema, GuideListSchema, GuideParamsSchema } from '../schemas/guide.js';
import type { GuideDetail, GuideListQuery } from '../schemas/guide.js';
import type { Rendered } from '../plugins/caching.js';
import { guideListBody, guideUrl, renderSearchPage } from '../guide-list-body.js';
import { negotiateContentCoding } from '../representation.js';
import type { ContentCoding } from '../representation.js';
import type { App, RouteContext } from '../app-types.js';
import { guideDetailExamples, guideListExamples, listGuidesBadRequestExamples } from '../schemas/examples.js';
import { operationResponses } from '../schemas/responses.js';
import { DEFAULT_LIMIT } from './product.js';
import { NoQuerySchema } from '../schemas/common.js';

/**
 * Before validation: trim `q` (its 200-character limit applies after trimming) and turn `limit`
 * into a number only when it is plain decimal digits, so `0x10`, `1e1`, `+5` and `05` stay strings
 * and fail the integer schema instead of being coerced.
 */
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const CONTROL_CHARACTER = /[\u0000-\u001F\u007F]/;

const normalizeListQuery: preValidationHookHandler = (request, _reply, done) => {
  const query = request.query as Record<string, unknown>;
  // Control characters are refused, not trimmed away, so `q=%0A` is a 400 like `q=a%0Ab`.
  if (typeof query.q === 'string' && !CONTROL_CHARACTER.test(query.q)) query.q = query.q.trim();
  if (typeof query.limit === 'string' && /^(0|[1-9][0-9]{0,5})$/.test(query.limit)) query.limit = Number(query.limit);
  done();
};

function codingOf(request: FastifyRequest): { coding?: ContentCoding } {
  const coding = negotiateContentCoding(request.headers['accept-encoding']);
  return coding === undefined ? {} : { coding };
}

/** These representations depend on the request target alone (and its codings and validators). */
const BY_URL = { identifiedByUrl: true } as const;

function httpDate(timestamp: string): string {
  return new Date(timestamp).toUTCString();
}

export function registerGuideRoutes(app: App, { config, store, cache, cursorCodec }: RouteContext): void {
  const base = config.publicBaseUrl;
  const withUrl = (guide: GuideDetailData): GuideDetail => ({ ...guide, url: guideUrl(base, guide.slug) });
  const linkTo = (limit: number, nextCursor: string | undefined): { link?: string } => (nextCursor === undefined ? {} : {
    link: `<${base}/api/v1/guides?${new URLSearchParams({ ...(limit === DEFAULT_LIMIT ? {} : { limit: String(limit) }), cursor: nextCursor })}>; rel="next"`,
  });

  const serveList = (request: FastifyRequest, reply: FastifyReply, text: string, limit: number, cursor: string | undefined,
    position: CursorPayload | undefined): Promise<void> | undefined => {
    const key = `guides?${JSON.stringify([text, limit, cursor ?? ''])}`;
    return cache.serve(request, reply, key, async (): Promise<Rendered> => {
      const codec = await cursorCodec();
      if (text === '') {
        const after = position?.kind === 'list' ? position.after : undefined;
        const page = await store.listPublishedGuides({ limit, ...(after ? { after } : {}) });
        const nextCursor = page.next ? codec.encode({ kind: 'list', after: page.next }) : undefined;
        return { body: guideListBody(page.items, base, nextCursor), ...linkTo(limit, nextCursor) };
      }
      const query = parseSearchQuery(text);
      if (query.terms.length === 0) return { body: guideListBody([], base) };
      const options = { query, limit, ...(position?.kind === 'search' ? { after: position.after } : {}) };
      const rendered = store.renderSearchPage
        // Rendered (and compressed, for the coding asked for) where the search ran, a search
        // worker: this thread only sends the bytes.
        ? await store.renderSearchPage(options, { urlBase: base, cursorKey: codec.signingKey, ...codingOf(request) })
        : renderSearchPage(await store.searchPublishedGuides(options), query.text, { urlBase: base, cursorKey: codec.signingKey });
      return { ...rendered, ...linkTo(limit, rendered.nextCursor) };
    }, BY_URL);
  };

  app.get('/api/v1/guides', {
    preValidation: normalizeListQuery,
    schema: {
      operationId: 'listGuides',
      summary: 'List or search published guides',
      description: 'Published guides, newest first (publishedAt desc, then slug), or ranked by relevance when `q` is given. '
        + 'Cursor-paginated: follow `nextCursor` (also sent as `Link: <…>; rel="next"`) until it is absent.',
      tags: ['guides'],
      querystring: GuideListQuerySchema,
      response: operationResponses(base, {
        schema: GuideListSchema,
        description: 'A page of published guides. `nextCursor` and the Link header are present only when more results exist.',
        examples: guideListExamples(base),
        headers: ['Link'],
        badRequestExamples: listGuidesBadRequestExamples(base),
      }),
    },
  }, (request, reply) => {
    const { q = '', limit = DEFAULT_LIMIT, cursor } = request.query as GuideListQuery;
    // A first page is answered without a promise when cached; only a cursor needs the codec first.
    if (cursor === undefined) return serveList(request, reply, q, limit, undefined, undefined);
    return cursorCodec().then((codec) => {
      const position = codec.decode(cursor);
      if (!position) throw new InvalidCursorError();
      const cursorQ = position.kind === 'search' ? position.q : '';
      if (q !== '' && q !== cursorQ) throw new InvalidCursorError('This cursor continues a different search: send the same q as the first page, or none.');
      return serveList(request, reply, position.kind === 'search' ? position.q : '', limit, cursor, position);
    });
  });

  app.get('/api/v1/guides/:slug', {
    schema: {
      operationId: 'getGuide',
      summary: 'One published guide',
      description: 'The guide\'s metadata, Markdown body, word count and headings. Unpublished, unknown and malformed slugs all get the same 404.',
      tags: ['guides'],
      params: GuideParamsSchema,
      querystring: NoQuerySchema,
      response: operationResponses(base, {
        schema: GuideDetailSchema,
        description: 'The published guide. `author` and `canonicalUrl` appear only when the content sets them.',
        examples: guideDetailExamples(base),
        headers: ['Last-Modified'],
        notFound: true,
      }),
    },
  }, (request, reply) => cache.serve(request, reply, `guide/${request.params.slug}`, async () => {
    const guide = await store.getPublishedGuide(request.params.slug);
    if (!guide) throw new NotFoundError();
    return { payload: withUrl(guide), lastModified: httpDate(guide.updatedAt) };
  }, BY_URL));
}
