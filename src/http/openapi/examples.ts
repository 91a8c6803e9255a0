/**
 * Response examples for /openapi.json, taken from the sample content (content/). They are not
 * schemas: test/http/plugins/openapi.test.ts checks each one against the schema it illustrates and
 * against what the API really answers for the sample content, so they cannot drift unnoticed.
 */
import { MAX_LIMIT } from '../../guides/limits.js';
import { rootLinks } from '../../schemas/agents.js';
import type { Root } from '../../schemas/agents.js';
import type { GuideDetail, GuideList } from '../../schemas/guide.js';
import { productBody } from '../../schemas/product.js';
import type { Resources } from '../../schemas/resource.js';
import { renderGuideMarkdown } from '../guide-markdown.js';
import { problemBody } from '../problems.js';
import type { NamedExample } from './responses.js';

/** Cursors are signed per deployment; these are real ones from a test deployment, opaque to clients. */
const LIST_CURSOR = 'WzEsImwiLDE3NzMyMzIyMDAwMDAsInByaW1lLWNvc3QtYW5kLXdlZWtseS1wbCJd.nM9eH_86UbEHmlKRQtwm6A';
const SEARCH_CURSOR =
  'WzEsInMiLCJmb29kIHdhc3RlIiwtMC41MTc0NzQzNTMyMjc0NDQzLDE3Njg5Mjc1MDAwMDAsInJlZHVjZS1mb29kLXdhc3RlIl0.JiArlGExNX2Ivx4GQvmBsg';

export function productExamples(base: string): Record<string, NamedExample> {
  const value = productBody(
    {
      name: 'Restaurant Guides',
      description: 'Practical guides for running a restaurant, from food safety and allergens to menu costing, staffing and service.',
      homepage: 'https://guides.example.com',
    },
    base,
  );
  return { sample: { summary: "The sample content's product.yaml", value } };
}

export function guideListExamples(base: string): Record<string, NamedExample> {
  const list: GuideList = {
    items: [
      {
        slug: 'bar-inventory-and-beverage-cost',
        title: 'Bar Inventory and Beverage Cost',
        summary:
          'Count the bar accurately by weight or tenths, calculate pour cost by category, cost cocktails, draft beer and wine by the glass, and track variance against POS sales.',
        tags: ['beverage', 'inventory', 'costing'],
        language: 'en',
        publishedAt: '2026-05-19T14:20:00Z',
        updatedAt: '2026-06-30T18:00:00Z',
        readingTimeMinutes: 4,
        url: `${base}/api/v1/guides/bar-inventory-and-beverage-cost`,
      },
      {
        slug: 'prime-cost-and-weekly-pl',
        title: 'Prime Cost and the Weekly P&L',
        summary:
          'Calculate prime cost every week, build a one-page flash P&L from inventory counts and payroll, and act on the gap before the month closes.',
        tags: ['finance', 'costing', 'staffing'],
        language: 'en',
        publishedAt: '2026-03-11T12:30:00Z',
        updatedAt: '2026-03-25T07:55:00Z',
        readingTimeMinutes: 4,
        url: `${base}/api/v1/guides/prime-cost-and-weekly-pl`,
      },
    ],
    nextCursor: LIST_CURSOR,
  };
  const search: GuideList = {
    items: [
      {
        slug: 'reduce-food-waste',
        title: 'Reduce Food Waste in Prep and Service',
        summary:
          'Measure food waste with a simple waste log, find its sources in spoilage, trim, overproduction and plate waste, and cut it with targeted fixes that lower food cost.',
        tags: ['sustainability', 'kitchen-operations', 'costing'],
        language: 'en',
        publishedAt: '2026-01-20T16:45:00Z',
        updatedAt: '2026-03-02T09:20:00Z',
        readingTimeMinutes: 4,
        url: `${base}/api/v1/guides/reduce-food-waste`,
        snippet:
          'Measure **food** **waste** with a simple **waste** log, find its sources in spoilage, trim, overproduction and plate **waste**, and cut it with targeted fixes…',
      },
    ],
    nextCursor: SEARCH_CURSOR,
  };
  return {
    newest: { summary: 'GET /api/v1/guides?limit=2: the newest published guides, with a next page', value: list },
    search: { summary: 'GET /api/v1/guides?q=food%20waste&limit=1: the best match, with a snippet', value: search },
  };
}

export function guideDetailExamples(base: string): Record<string, NamedExample> {
  const value: GuideDetail = {
    slug: 'reduce-food-waste',
    title: 'Reduce Food Waste in Prep and Service',
    summary:
      'Measure food waste with a simple waste log, find its sources in spoilage, trim, overproduction and plate waste, and cut it with targeted fixes that lower food cost.',
    tags: ['sustainability', 'kitchen-operations', 'costing'],
    language: 'en',
    publishedAt: '2026-01-20T16:45:00Z',
    updatedAt: '2026-03-02T09:20:00Z',
    readingTimeMinutes: 4,
    url: `${base}/api/v1/guides/reduce-food-waste`,
    markdown:
      '# Reduce Food Waste in Prep and Service\n\nFood a kitchen throws away has already been paid for, stored, prepped and often cooked. Cutting waste is therefore one of the few changes that lowers food cost, labor and disposal fees at the same time. The approach is always the same: measure it, find which category dominates, fix that first, and keep measuring.\n\n## Measure first with a waste log\n\n…',
    wordCount: 749,
    headings: [
      { depth: 1, text: 'Reduce Food Waste in Prep and Service', id: 'reduce-food-waste-in-prep-and-service' },
      { depth: 2, text: 'Measure first with a waste log', id: 'measure-first-with-a-waste-log' },
      { depth: 2, text: 'Fix the four sources', id: 'fix-the-four-sources' },
    ],
    author: { name: 'Sofia Lindqvist' },
  };
  return { sample: { summary: 'GET /api/v1/guides/reduce-food-waste (markdown and headings shortened here)', value } };
}

export function resourcesExamples(base: string): Record<string, NamedExample> {
  const value: Resources = {
    links: [
      { rel: 'service-desc', href: `${base}/openapi.json`, type: 'application/openapi+json', title: 'OpenAPI definition of this API' },
      { rel: 'service-doc', href: `${base}/docs`, type: 'text/html', title: 'API reference' },
      { rel: 'describedby', href: `${base}/llms.txt`, type: 'text/markdown', title: 'Guide index for language models' },
      { rel: 'alternate', href: `${base}/mcp`, type: 'application/json', title: 'MCP server (Streamable HTTP)' },
      {
        rel: 'terms-of-service',
        href: 'https://guides.example.com/terms',
        type: 'text/html',
        title: 'Terms of use for the guides and the API',
      },
      { rel: 'help', href: 'https://guides.example.com/help', type: 'text/html', title: 'Help and contact for API users' },
      { rel: 'license', href: 'https://creativecommons.org/licenses/by/4.0/', type: 'text/html', title: 'Guides are licensed CC BY 4.0' },
    ],
  };
  return { sample: { summary: 'Built-in links, then the sample resources.yaml', value } };
}

export function listGuidesBadRequestExamples(base: string): Record<string, NamedExample> {
  const invalidParameters = 'One or more query parameters are invalid; see errors.';
  return {
    limitOutOfRange: {
      summary: `GET /api/v1/guides?limit=${MAX_LIMIT + 1}`,
      value: problemBody(base, 'invalid-parameter', invalidParameters, [
        { in: 'query', name: 'limit', detail: `must be an integer from 1 to ${MAX_LIMIT}, written in plain decimal digits` },
      ]),
    },
    unknownParameter: {
      summary: 'GET /api/v1/guides?sort=title',
      value: problemBody(base, 'invalid-parameter', invalidParameters, [
        { in: 'query', name: 'sort', detail: 'is not a parameter of this operation; accepted parameters: q, limit, cursor' },
      ]),
    },
    invalidCursor: {
      summary: 'A cursor that was altered or forged',
      value: problemBody(
        base,
        'invalid-cursor',
        'The cursor is not one this API issued, or it was changed. Pass nextCursor back unchanged.',
      ),
    },
    cursorForAnotherSearch: {
      summary: 'A cursor sent with a different q than the search it came from',
      value: problemBody(base, 'invalid-cursor', 'This cursor continues a different search: send the same q as the first page, or none.'),
    },
  };
}

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

export function rootExamples(base: string): Record<string, NamedExample> {
  const value: Root = {
    name: 'Restaurant Guides',
    description: 'Practical guides for running a restaurant, from food safety and allergens to menu costing, staffing and service.',
    apiVersion: 'v1',
    links: rootLinks(base),
  };
  return { sample: { summary: 'GET / for the sample content', value } };
}
