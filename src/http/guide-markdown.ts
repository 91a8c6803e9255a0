/**
 * guideMarkdown: a published guide as one Markdown document, a YAML front matter block with its
 * metadata followed by the body exactly as authored. The MCP resources serve it; the REST `.md`
 * representation is the same document.
 */
import { stringify } from 'yaml';
import type { GuideDetailData } from '../guides/guide.js';
import { guideUrl } from './guide-list-body.js';

export function guideMarkdown(guide: GuideDetailData, urlBase: string): string {
  const meta = {
    title: guide.title,
    summary: guide.summary,
    url: guideUrl(urlBase, guide.slug),
    publishedAt: guide.publishedAt,
    updatedAt: guide.updatedAt,
    tags: guide.tags,
    language: guide.language,
    ...(guide.author ? { author: guide.author } : {}),
    ...(guide.canonicalUrl ? { canonicalUrl: guide.canonicalUrl } : {}),
  };
  // lineWidth 0: a long summary stays on one line, as authored.
  return `---\n${stringify(meta, { lineWidth: 0 })}---\n\n${guide.markdown}`;
}
