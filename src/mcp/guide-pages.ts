/**
 * The pages the MCP tools answer with, made by the same store calls, cursor codec and page
 * renderer as GET /api/v1/guides (routes/guides.ts): a search here is the same bytes as the REST
 * search page for the same text, limit and cursor, so the same guides in the same order, and each
 * side's nextCursor continues the other's walk.
 *
 * The store is called directly rather than through app.inject: an injected request would pass the
 * rate limiter again, counted under the server's own address for every MCP client at once.
 */
import type { ListPosition } from '../guides/cursor.js';
import type { GuideDetailData, GuideSummaryData } from '../guides/guide.js';
import { isValidSlug } from '../guides/guide.js';
import { parseSearchQuery } from '../guides/search-query.js';
import type { RouteContext } from '../http/app-types.js';
import { guideListBody, guideUrl, renderSearchPage } from '../representation/guide-list-body.js';

/** A page body (UTF-8 JSON of GuideList), or why there is none. */
export type PageResult = { ok: true; body: Buffer } | { ok: false; reason: 'invalid-cursor' | 'other-search' };

/** A filtered list reads at most this many guides per call; its page may then be short, with a nextCursor. */
export const MAX_SCANNED_PER_CALL = 1000;
const SCAN_PAGE = 100;

export async function searchGuides(context: RouteContext, options: { query: string; limit: number; cursor?: string }): Promise<PageResult> {
  const { store, searchPages, cursorCodec, config } = context;
  const base = config.publicBaseUrl;
  const codec = await cursorCodec();
  const text = options.query.trim();
  let after;
  if (options.cursor !== undefined) {
    const position = codec.decode(options.cursor);
    if (!position) return { ok: false, reason: 'invalid-cursor' };
    // As REST: a cursor continues the search it came from (a list cursor continues no search).
    if (position.kind !== 'search' || position.q !== text) return { ok: false, reason: 'other-search' };
    after = position.after;
  }
  const query = parseSearchQuery(text);
  if (query.terms.length === 0) return { ok: true, body: guideListBody([], base) };
  const searchOptions = { query, limit: options.limit, ...(after ? { after } : {}) };
  const rendering = { urlBase: base, cursorKey: codec.signingKey };
  const rendered = searchPages
    ? await searchPages.renderSearchPage(searchOptions, rendering)
    : renderSearchPage(await store.searchPublishedGuides(searchOptions), query.text, rendering);
  return { ok: true, body: rendered.body };
}

export interface ListOptions {
  limit: number;
  cursor?: string;
  tag?: string;
  language?: string;
}

/**
 * Newest first, as the REST list. The store has no tag or language filter yet, so a filtered list
 * reads the list in order and keeps the guides that match, at most MAX_SCANNED_PER_CALL per call.
 */
export async function listGuides(context: RouteContext, options: ListOptions): Promise<PageResult> {
  const { store, cursorCodec, config } = context;
  const codec = await cursorCodec();
  let after: ListPosition | undefined;
  if (options.cursor !== undefined) {
    const position = codec.decode(options.cursor);
    if (!position) return { ok: false, reason: 'invalid-cursor' };
    if (position.kind !== 'list') return { ok: false, reason: 'other-search' };
    after = position.after;
  }
  const encode = (next: ListPosition | undefined): string | undefined => (next ? codec.encode({ kind: 'list', after: next }) : undefined);
  const { limit, tag, language } = options;
  if (tag === undefined && language === undefined) {
    const page = await store.listPublishedGuides({ limit, ...(after ? { after } : {}) });
    return { ok: true, body: guideListBody(page.items, config.publicBaseUrl, encode(page.next)) };
  }

  const wantedTag = tag?.toLowerCase();
  const wantedLanguage = language?.toLowerCase();
  const matches = (guide: GuideSummaryData): boolean =>
    (wantedTag === undefined || guide.tags.some((t) => t.toLowerCase() === wantedTag)) &&
    (wantedLanguage === undefined || guide.language.toLowerCase() === wantedLanguage);
  const items: GuideSummaryData[] = [];
  let scanned = 0;
  let position = after;
  let more = true;
  while (more && items.length < limit && scanned < MAX_SCANNED_PER_CALL) {
    const page = await store.listPublishedGuides({ limit: SCAN_PAGE, ...(position ? { after: position } : {}) });
    for (const [index, guide] of page.items.entries()) {
      scanned += 1;
      position = { publishedMs: Date.parse(guide.publishedAt), slug: guide.slug };
      if (matches(guide)) items.push(guide);
      if (items.length === limit || scanned === MAX_SCANNED_PER_CALL) {
        more = index < page.items.length - 1 || page.next !== undefined;
        break;
      }
    }
    if (items.length < limit && scanned < MAX_SCANNED_PER_CALL) more = page.next !== undefined;
  }
  return { ok: true, body: guideListBody(items, config.publicBaseUrl, more ? encode(position) : undefined) };
}

/** A published guide with its URL, or undefined for every slug that names none (malformed ones included). */
export async function getGuide(context: RouteContext, slug: string): Promise<(GuideDetailData & { url: string }) | undefined> {
  if (!isValidSlug(slug)) return undefined;
  const guide = await context.store.getPublishedGuide(slug);
  return guide ? { ...guide, url: guideUrl(context.config.publicBaseUrl, guide.slug) } : undefined;
}
