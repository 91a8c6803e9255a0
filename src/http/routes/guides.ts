import type { FastifyReply, FastifyRequest, preValidationHookHandler } from 'fastify';
import type { CursorPayload } from '../../guides/cursor.js';
import type { GuideDetailData } from '../../guides/guide.js';
import { parseSearchQuery } from '../../guides/search-query.js';
import { InvalidCursorError, NotFoundError } from '../problems.js';
import { GuideDetailSchema, GuideListQuerySchema, GuideListSchema, GuideParamsSchema } from '../../schemas/guide.js';
import type { GuideDetail, GuideListQuery } from '../../schemas/guide.js';
import type { Rendered } from '../cache/rendered.js';
import type { ServeOptions } from '../cache/representation-cache.js';
import { guideListBody, guideUrl, renderSearchPage } from '../../representation/guide-list-body.js';
import { negotiateContentCoding } from '../../representation/representation.js';
import type { ContentCoding } from '../../representation/representation.js';
import type { App, RouteContext } from '../app-types.js';
import { guideDetailExamples, guideListExamples, guideMarkdownExamples, listGuidesBadRequestExamples } from '../openapi/examples.js';
import { ALTERNATE_LINK_HEADER, MARKDOWN_TOKENS_HEADER, operationResponses } from '../openapi/responses.js';
import { DEFAULT_LIMIT } from '../../guides/limits.js';
import { NoQuerySchema } from '../../schemas/common.js';
import { GuideMarkdownSchema } from '../../schemas/agents.js';
import { MARKDOWN_TYPE, markdownTokenEstimate, negotiateGuideFormat, renderGuideMarkdown } from '../guide-markdown.js';
import type { GuideFormat } from '../guide-markdown.js';

// eslint-disable-next-line no-control-regex -- finding control characters is the point
const CONTROL_CHARACTER = /[\u0000-\u001F\u007F]/;

/**
 * Before validation: trim `q` (its MAX_QUERY_LENGTH applies after trimming) and turn `limit`
 * into a number only when it is plain decimal digits, so `0x10`, `1e1`, `+5` and `05` stay strings
 * and fail the integer schema instead of being coerced.
 */
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
/** The guide's URL names one representation per format, the one its Accept chooses. */
const NEGOTIATED = {
  json: { identifiedByUrl: true, negotiated: { format: 'json', choose: negotiateGuideFormat } },
  markdown: { identifiedByUrl: true, negotiated: { format: 'markdown', choose: negotiateGuideFormat } },
} as const;

function httpDate(timestamp: string): string {
  return new Date(timestamp).toUTCString();
}

export function registerGuideRoutes(app: App, { config, store, searchPages, cache, cursorCodec }: RouteContext): void {
  const base = config.publicBaseUrl;
  const withUrl = (guide: GuideDetailData): GuideDetail => ({ ...guide, url: guideUrl(base, guide.slug) });
  const linkTo = (limit: number, nextCursor: string | undefined): { link?: string } =>
    nextCursor === undefined
      ? {}
      : {
          link: `<${base}/api/v1/guides?${new URLSearchParams({ ...(limit === DEFAULT_LIMIT ? {} : { limit: String(limit) }), cursor: nextCursor })}>; rel="next"`,
        };

  const serveList = (
    request: FastifyRequest,
    reply: FastifyReply,
    text: string,
    limit: number,
    cursor: string | undefined,
    position: CursorPayload | undefined,
  ): Promise<void> | undefined => {
    const key = `guides?${JSON.stringify([text, limit, cursor ?? ''])}`;
    return cache.serve(
      request,
      reply,
      key,
      async (): Promise<Rendered> => {
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
        const rendered = searchPages
          ? // Rendered (and compressed, for the coding asked for) where the search ran, a search
            // worker: this thread only sends the bytes.
            await searchPages.renderSearchPage(options, { urlBase: base, cursorKey: codec.signingKey, ...codingOf(request) })
          : renderSearchPage(await store.searchPublishedGuides(options), query.text, { urlBase: base, cursorKey: codec.signingKey });
        return { ...rendered, ...linkTo(limit, rendered.nextCursor) };
      },
      BY_URL,
    );
  };

  app.get(
    '/api/v1/guides',
    {
      preValidation: normalizeListQuery,
      schema: {
        operationId: 'listGuides',
        summary: 'List or search published guides',
        description:
          'Published guides, newest first (publishedAt desc, then slug), or ranked by relevance when `q` is given. ' +
          'Cursor-paginated: follow `nextCursor` (also sent as `Link: <…>; rel="next"`) until it is absent.',
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
    },
    (request, reply) => {
      const { q = '', limit = DEFAULT_LIMIT, cursor } = request.query as GuideListQuery;
      // A first page is answered without a promise when cached; only a cursor needs the codec first.
      if (cursor === undefined) return serveList(request, reply, q, limit, undefined, undefined);
      return cursorCodec().then((codec) => {
        const position = codec.decode(cursor);
        if (!position) throw new InvalidCursorError();
        const cursorQ = position.kind === 'search' ? position.q : '';
        if (q !== '' && q !== cursorQ)
          throw new InvalidCursorError('This cursor continues a different search: send the same q as the first page, or none.');
        return serveList(request, reply, position.kind === 'search' ? position.q : '', limit, cursor, position);
      });
    },
  );

  /** A published guide in the format asked for; unpublished, unknown and malformed slugs all get the same 404 whatever the format. */
  const serveGuide = (
    request: FastifyRequest,
    reply: FastifyReply,
    slug: string,
    format: GuideFormat,
    options: ServeOptions,
  ): Promise<void> | undefined => {
    const jsonUrl = guideUrl(base, slug);
    return cache.serve(
      request,
      reply,
      `guide/${format}/${slug}`,
      async (): Promise<Rendered> => {
        const guide = await store.getPublishedGuide(slug);
        if (!guide) throw new NotFoundError();
        const lastModified = httpDate(guide.updatedAt);
        if (format === 'json') {
          // Serialized here: the 200 has a schema per media type, and the cache cannot tell which one.
          const body = Buffer.from(String(reply.serializeInput(withUrl(guide), '200', 'application/json')), 'utf8');
          return { body, lastModified, link: `<${jsonUrl}.md>; rel="alternate"; type="text/markdown"` };
        }
        const markdown = renderGuideMarkdown(guide, jsonUrl);
        return {
          payload: markdown,
          contentType: MARKDOWN_TYPE,
          lastModified,
          link: `<${jsonUrl}>; rel="alternate"; type="application/json"`,
          headers: { 'x-markdown-tokens': String(markdownTokenEstimate(markdown)) },
        };
      },
      options,
    );
  };

  const markdownResponse = {
    schema: GuideMarkdownSchema,
    examples: guideMarkdownExamples(base),
  };
  const guideHeaders = { Link: ALTERNATE_LINK_HEADER, 'X-Markdown-Tokens': MARKDOWN_TOKENS_HEADER };

  app.get(
    '/api/v1/guides/:slug',
    {
      schema: {
        operationId: 'getGuide',
        summary: 'One published guide',
        description:
          "The guide's metadata, Markdown body, word count and headings; or, when the Accept header prefers `text/markdown`, the guide as Markdown. " +
          'Accept is read with its q-values: the higher q wins, then a type named explicitly over one reached through a wildcard; any other tie, `*/*`, no Accept ' +
          'or an Accept naming neither gives JSON (never a 406). Each representation has its own strong ETag. ' +
          'Unpublished, unknown and malformed slugs all get the same 404, whatever the Accept.',
        tags: ['guides'],
        params: GuideParamsSchema,
        querystring: NoQuerySchema,
        response: operationResponses(base, {
          schema: GuideDetailSchema,
          description:
            'The published guide. JSON: `author` and `canonicalUrl` appear only when the content sets them. ' +
            'Markdown (`text/markdown; charset=utf-8`, as `GET /api/v1/guides/{slug}.md` answers): front matter and body, with X-Markdown-Tokens.',
          examples: guideDetailExamples(base),
          alternatives: { 'text/markdown': markdownResponse },
          headers: ['Last-Modified'],
          extraHeaders: guideHeaders,
          notFound: true,
        }),
      },
    },
    (request, reply) => {
      const format = negotiateGuideFormat(request.headers.accept);
      return serveGuide(request, reply, request.params.slug, format, NEGOTIATED[format]);
    },
  );

  app.get(
    '/api/v1/guides/:slug.md',
    {
      schema: {
        operationId: 'getGuideMarkdown',
        summary: 'One published guide as Markdown',
        description:
          'The Markdown representation of a published guide whatever the Accept header: YAML front matter with its metadata, then the body exactly as authored. ' +
          'For agents that cannot send Accept: text/markdown. Unpublished, unknown and malformed slugs get the same 404 as `GET /api/v1/guides/{slug}`.',
        tags: ['guides'],
        params: GuideParamsSchema,
        querystring: NoQuerySchema,
        response: operationResponses(base, {
          ...markdownResponse,
          mediaType: 'text/markdown',
          description: 'The published guide as `text/markdown; charset=utf-8`.',
          headers: ['Last-Modified'],
          extraHeaders: guideHeaders,
          notFound: true,
        }),
      },
    },
    (request, reply) => serveGuide(request, reply, request.params.slug, 'markdown', BY_URL),
  );
}
