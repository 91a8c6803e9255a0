/**
 * A guide's Markdown representation (for agents): YAML front matter with its public metadata, then
 * the body exactly as authored; and the choice between it and JSON from a request's Accept header.
 */
import Negotiator from 'negotiator';
import { stringify } from 'yaml';
import type { GuideDetailData } from '../guides/guide.js';

export const MARKDOWN_TYPE = 'text/markdown; charset=utf-8';
export type GuideFormat = 'json' | 'markdown';

const OFFERED = ['application/json', 'text/markdown'];
const MEMO_LIMIT = 256;
const memo = new Map<string, GuideFormat>();

function markdownWins(accept: string): boolean {
  return new Negotiator({ headers: { accept } }).mediaType(OFFERED) === 'text/markdown';
}

// JSON or Markdown for an Accept header: the higher q-value wins, then the type named explicitly
// over one reached through a wildcard (`text/markdown, */*` is Markdown); any other tie, `*/*`, no
// Accept, or an Accept naming neither is JSON (never a 406). negotiator breaks exact ties by the
// order of the header's members, so a Markdown win is confirmed with the members reversed.
// Clients send few distinct headers, so answers are memoized.
export function negotiateGuideFormat(accept: string | undefined): GuideFormat {
  if (accept === undefined || accept === '') return 'json';
  let format = memo.get(accept);
  if (format === undefined) {
    const reversed = accept.split(',').reverse().join(',');
    format = markdownWins(accept) && markdownWins(reversed) ? 'markdown' : 'json';
    if (memo.size >= MEMO_LIMIT) memo.clear();
    memo.set(accept, format);
  }
  return format;
}

/** The Markdown representation: front matter (the public fields, `canonicalUrl` and `author` when set), a blank line, the body. */
export function renderGuideMarkdown(guide: GuideDetailData, url: string): string {
  const front = {
    title: guide.title,
    summary: guide.summary,
    url,
    publishedAt: guide.publishedAt,
    updatedAt: guide.updatedAt,
    tags: guide.tags,
    language: guide.language,
    ...(guide.author ? { author: guide.author } : {}),
    ...(guide.canonicalUrl ? { canonicalUrl: guide.canonicalUrl } : {}),
  };
  // Strings double-quoted, so that a YAML 1.1 reader keeps timestamps as strings; no line folding.
  const yaml = stringify(front, { defaultStringType: 'QUOTE_DOUBLE', defaultKeyType: 'PLAIN', lineWidth: 0 });
  return `---\n${yaml}---\n\n${guide.markdown}`;
}

/** X-Markdown-Tokens: an estimate of the body's size in LLM tokens, about four bytes of UTF-8 a token. */
export function markdownTokenEstimate(body: string | Buffer): number {
  return Math.ceil((typeof body === 'string' ? Buffer.byteLength(body, 'utf8') : body.length) / 4);
}
