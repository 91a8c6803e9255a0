/**
 * Schemas of what the API offers agents beyond JSON: a guide's Markdown representation,
 * /llms-full.txt and the index at `GET /` (their headers and examples: http/openapi/).
 */
import { Type } from './typebox.js';
import type { Static } from 'typebox';
import { AbsoluteUrlSchema } from './common.js';

export const GuideMarkdownSchema = Type.String({
  description:
    'A YAML front matter block (title, summary, url, publishedAt, updatedAt, tags, language, and author and canonicalUrl when the content sets them), ' +
    'a blank line, then the guide body exactly as authored (CommonMark with GFM tables).',
});

export const LlmsFullSchema = Type.String({
  description:
    'The Markdown representation of every published guide (as its `.md` URL answers it), newest first, each ended by a blank line and separated by lines of `---`.',
});

export const RootSchema = Type.Object(
  {
    name: Type.String(),
    description: Type.String(),
    apiVersion: Type.Literal('v1'),
    links: Type.Object(
      {
        product: AbsoluteUrlSchema,
        guides: AbsoluteUrlSchema,
        resources: AbsoluteUrlSchema,
        openapi: AbsoluteUrlSchema,
        docs: AbsoluteUrlSchema,
        mcp: AbsoluteUrlSchema,
        llmsTxt: AbsoluteUrlSchema,
        llmsFullTxt: AbsoluteUrlSchema,
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);
export type Root = Static<typeof RootSchema>;

export function rootLinks(base: string): Root['links'] {
  return {
    product: `${base}/api/v1/product`,
    guides: `${base}/api/v1/guides`,
    resources: `${base}/api/v1/resources`,
    openapi: `${base}/openapi.json`,
    docs: `${base}/docs`,
    mcp: `${base}/mcp`,
    llmsTxt: `${base}/llms.txt`,
    llmsFullTxt: `${base}/llms-full.txt`,
  };
}
