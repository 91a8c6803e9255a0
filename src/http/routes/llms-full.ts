/**
 * /llms-full.txt: every published guide's Markdown representation, newest first, separated by
 * `---` lines. It grows with the content (100k guides are hundreds of megabytes), so it is never
 * held whole: pages of guides are read from the store as the client takes the bytes, and
 * compressed as they stream. Its ETag names the content version (and this software's version), so
 * a 304 costs no read at all.
 */
import { pipeline, Readable } from 'node:stream';
import { constants as zlibConstants, createBrotliCompress, createGzip } from 'node:zlib';
import type { GuideDetailData } from '../../guides/guide.js';
import type { ListPosition } from '../../guides/cursor.js';
import type { GuideStore } from '../../store/guide-store.js';
import { SOFTWARE_VERSION } from '../../lib/version.js';
import type { App, RouteContext } from '../app-types.js';
import { guideUrl } from '../../representation/guide-list-body.js';
import { MARKDOWN_TYPE, renderGuideMarkdown } from '../guide-markdown.js';
import { ifNoneMatchHits } from '../cache/conditional.js';
import { BROTLI_QUALITY, negotiateContentCoding, representationHash } from '../../representation/representation.js';
import { LlmsFullSchema } from '../../schemas/agents.js';
import { llmsFullExamples } from '../openapi/examples.js';
import { NoQuerySchema } from '../../schemas/common.js';
import { operationResponses } from '../openapi/responses.js';

/** Guides read from the store at a time: what the stream holds in memory, besides zlib's buffers. */
const PAGE_SIZE = 50;
const SEPARATOR = '---\n\n';

interface GuidePage {
  guides: GuideDetailData[];
  next?: ListPosition;
}

async function readPage(store: GuideStore, after: ListPosition | undefined): Promise<GuidePage> {
  const page = await store.listPublishedGuides({ limit: PAGE_SIZE, ...(after ? { after } : {}) });
  const guides = await Promise.all(page.items.map((item) => store.getPublishedGuide(item.slug)));
  // A guide unpublished since its page was listed is left out, never shown.
  return { guides: guides.filter((guide) => guide !== undefined), ...(page.next ? { next: page.next } : {}) };
}

/** The file from its first page (read before the response starts, so that a store failure is still a 503). */
async function* llmsFullText(store: GuideStore, base: string, first: GuidePage): AsyncGenerator<string> {
  let page: GuidePage | undefined = first;
  let isFirst = true;
  while (page !== undefined) {
    for (const guide of page.guides) {
      const markdown = renderGuideMarkdown(guide, guideUrl(base, guide.slug));
      // A blank line before `---`, so that it is a thematic break, not a heading underline.
      yield `${isFirst ? '' : SEPARATOR}${markdown}${markdown.endsWith('\n') ? '\n' : '\n\n'}`;
      isFirst = false;
    }
    page = page.next ? await readPage(store, page.next) : undefined;
  }
}

export function registerLlmsFullTxt(app: App, { config, store, cache }: Pick<RouteContext, 'config' | 'store' | 'cache'>): void {
  const base = config.publicBaseUrl;
  app.get(
    '/llms-full.txt',
    {
      schema: {
        operationId: 'getLlmsFullTxt',
        summary: 'Every published guide as Markdown, in one file',
        description:
          'The Markdown representation of every published guide (as `GET /api/v1/guides/{slug}.md` answers it), newest first, separated by `---` lines. ' +
          'Large: streamed (chunked), gzip or brotli when accepted. Fetch /llms.txt first and this only when you need everything. ' +
          'Its ETag changes whenever the content does.',
        tags: ['guides'],
        querystring: NoQuerySchema,
        response: operationResponses(base, {
          schema: LlmsFullSchema,
          mediaType: 'text/markdown',
          description: "Every published guide's Markdown, `text/markdown; charset=utf-8`.",
          examples: llmsFullExamples(base),
        }),
      },
    },
    async (request, reply) => {
      const coding = negotiateContentCoding(request.headers['accept-encoding']);
      const hash = representationHash(Buffer.from(`llms-full.txt\n${cache.contentVersion()}\n${SOFTWARE_VERSION}\n${base}`, 'utf8'));
      const etag = coding === undefined ? `"${hash}"` : `"${hash}-${coding}"`;
      reply.header('etag', etag).header('cache-control', cache.cacheControl).header('vary', 'Accept, Accept-Encoding');
      if (ifNoneMatchHits(request.headers['if-none-match'], [`"${hash}"`, `"${hash}-br"`, `"${hash}-gzip"`])) return reply.code(304).send();
      const first = await readPage(store, undefined);
      reply.type(MARKDOWN_TYPE);
      if (coding !== undefined) reply.header('content-encoding', coding);
      if (request.method === 'HEAD') return reply.send();
      const text = Readable.from(llmsFullText(store, base, first));
      if (coding === undefined) return reply.send(text);
      const compressor =
        coding === 'br' ? createBrotliCompress({ params: { [zlibConstants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY } }) : createGzip();
      // pipeline destroys both streams when either fails, so the response ends instead of hanging.
      return reply.send(pipeline(text, compressor, () => undefined));
    },
  );
}
