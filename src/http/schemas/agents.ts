/**
 * Schemas, headers and examples of what the API offers agents beyond JSON: a guide's Markdown
 * representation, /llms-full.txt and the index at `GET /`.
 */
import { Type } from './typebox.js';
import type { Static } from 'typebox';
import { AbsoluteUrlSchema } from './common.js';
import { guideDetailExamples } from './examples.js';
import type { GuideDetail } from './guide.js';
import type { HeaderSchema, NamedExample } from './responses.js';
import { renderGuideMarkdown } from '../guide-markdown.js';

export const GuideMarkdownSchema = Type.String({
  description:
    'A YAML front matter block (title, summary, url, publishedAt, updatedAt, tags, language, and author and canonicalUrl when the content sets them), ' +
    'a blank line, then the guide body exactly as authored (CommonMark with GFM tables).',
});

export const LlmsFullSchema = Type.String({
  description:
    'The Markdown representation of every published guide (as its `.md` URL answers it), newest first, each ended by a blank line and separated by lines of `---`.',
});

export const MARKDOWN_TOKENS_HEADER: HeaderSchema = {
  type: 'integer',
  description:
    "An estimate of the body's size in LLM tokens (its UTF-8 bytes divided by four, rounded up), not an exact count for any tokenizer. Markdown only.",
  minimum: 0,
  examples: [1612],
};

export const ALTERNATE_LINK_HEADER: HeaderSchema = {
  type: 'string',
  description:
    'RFC 8288 link to the guide\'s other representation: on JSON `<…/api/v1/guides/{slug}.md>; rel="alternate"; type="text/markdown"`, ' +
    'on Markdown `<…/api/v1/guides/{slug}>; rel="alternate"; type="application/json"`.',
  pattern: '^<[^>]+>; rel="alternate"; type="(?:application/json|text/markdown)"$',
  examples: ['<https://api.example.com/api/v1/guides/reduce-food-waste.md>; rel="alternate"; type="text/markdown"'],
};

export function guideMarkdownExamples(base: string): Record<string, NamedExample> {
  const guide = guideDetailExamples(base).sample?.value as GuideDetail;
  return {
    sample: {
      summary: 'GET /api/v1/guides/reduce-food-waste.md (the body shortened here)',
      value: renderGuideMarkdown(guide, guide.url),
    },
  };
}

export function llmsFullExamples(base: string): Record<string, NamedExample> {
  const guide = guideDetailExamples(base).sample?.value as GuideDetail;
  const markdown = renderGuideMarkdown(guide, guide.url);
  // The guide's body is shortened (it ends in `…`), so the blank line before `---` is added here.
  return {
    sample: { summary: 'The first guide of the sample content, then the next ones (shortened here)', value: `${markdown}\n\n---\n\n…\n` },
  };
}

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

export function rootExamples(base: string): Record<string, NamedExample> {
  const value: Root = {
    name: 'Restaurant Guides',
    description: 'Practical guides for running a restaurant, from food safety and allergens to menu costing, staffing and service.',
    apiVersion: 'v1',
    links: rootLinks(base),
  };
  return { sample: { summary: 'GET / for the sample content', value } };
}
