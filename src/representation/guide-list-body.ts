/**
 * The body of a guide list or search page made from guides: serialized with the route's response
 * schema and fast-json-stringify (the serializer Fastify itself compiles for a route). A search
 * worker renders its pages from cards instead (search-cards-body.ts): the same bytes.
 */
import fastJson from 'fast-json-stringify';
import type { SearchPosition } from '../guides/cursor.js';
import type { GuideSummaryData } from '../guides/guide.js';
import { GuideListSchema, GuideSummarySchema } from '../schemas/guide.js';
import type { GuideList, GuideSummary } from '../schemas/guide.js';
import { guideUrl, renderPage } from './rendered-page.js';
import type { RenderedSearchPage, SearchRendering } from './rendered-page.js';

export { guideUrl } from './rendered-page.js';

// Compiled on first use, not on import: loading this module is part of every start-up.
let compiled: ((list: GuideList) => string) | undefined;
const stringify = (list: GuideList): string =>
  (compiled ??= fastJson(GuideListSchema, { schema: { GuideSummary: GuideSummarySchema } }) as (list: GuideList) => string)(list);

/**
 * A guide as the list's schema has it, built field by field: every item then has one shape, and the
 * serializer reads its fields at full speed (items copied with `{ ...guide, url }` came out with
 * shapes V8 could not predict, and serialized about twice as slowly).
 */
function listItem(guide: GuideSummaryData, urlBase: string): GuideSummary {
  return {
    slug: guide.slug,
    title: guide.title,
    summary: guide.summary,
    tags: guide.tags,
    language: guide.language,
    publishedAt: guide.publishedAt,
    updatedAt: guide.updatedAt,
    readingTimeMinutes: guide.readingTimeMinutes,
    url: guideUrl(urlBase, guide.slug),
    // Left out of the JSON when undefined (list pages).
    snippet: guide.snippet,
  };
}

/** The page as response bytes (UTF-8 JSON). */
export function guideListBody(items: readonly GuideSummaryData[], urlBase: string, nextCursor?: string): Buffer {
  return Buffer.from(
    stringify({
      items: items.map((guide) => listItem(guide, urlBase)),
      ...(nextCursor === undefined ? {} : { nextCursor }),
    }),
    'utf8',
  );
}

/**
 * A search page as its response (see renderPage), when the store searched on the event loop: a page
 * has the same bytes wherever it was made.
 */
export function renderSearchPage(
  page: { items: readonly GuideSummaryData[]; next?: SearchPosition },
  q: string,
  rendering: SearchRendering,
): RenderedSearchPage {
  return renderPage(page.next, q, rendering, (nextCursor) => guideListBody(page.items, rendering.urlBase, nextCursor));
}
