import { Type } from './typebox.js';
import type { Static } from 'typebox';
import { AbsoluteUrlSchema, SlugSchema, TimestampSchema, refTo } from './common.js';
import { DEFAULT_LIMIT, MAX_LIMIT, MAX_QUERY_LENGTH } from '../guides/limits.js';

const summaryFields = {
  slug: SlugSchema,
  title: Type.String(),
  summary: Type.String(),
  tags: Type.Array(Type.String()),
  language: Type.String({ description: 'BCP 47 language tag.', examples: ['en'] }),
  publishedAt: TimestampSchema,
  updatedAt: TimestampSchema,
  readingTimeMinutes: Type.Integer({ minimum: 1 }),
  url: Type.String({ format: 'uri', description: 'This guide in the API.' }),
};

export const GuideSummarySchema = Type.Object(
  {
    ...summaryFields,
    snippet: Type.Optional(
      Type.String({
        description:
          'Present only when searching: plain-text excerpt of the best matching passage, on one line, matched terms wrapped in **. ' +
          'A break between blocks (heading, paragraph, list item, table cell) that ends without punctuation shows as ` · `; ' +
          '`…` marks where the excerpt cuts the text at either end.',
      }),
    ),
  },
  {
    $id: 'GuideSummary',
    title: 'GuideSummary',
    description: 'A published guide as lists and searches show it.',
    additionalProperties: false,
  },
);
export type GuideSummary = Static<typeof GuideSummarySchema>;

export const GuideListSchema = Type.Object(
  {
    items: Type.Array(refTo<GuideSummary>(GuideSummarySchema)),
    nextCursor: Type.Optional(Type.String({ description: 'Present only when more results exist; pass it back as `cursor`.' })),
  },
  { $id: 'GuideList', title: 'GuideList', description: 'A page of published guides.', additionalProperties: false },
);
export type GuideList = Static<typeof GuideListSchema>;

export const HeadingSchema = Type.Object(
  {
    depth: Type.Integer({ minimum: 1, maximum: 6 }),
    text: Type.String(),
    id: Type.String({ description: 'GitHub-style anchor id, unique within the guide.' }),
  },
  { additionalProperties: false },
);

export const GuideDetailSchema = Type.Object(
  {
    ...summaryFields,
    markdown: Type.String({ description: 'The guide body in Markdown (CommonMark with GFM tables).' }),
    wordCount: Type.Integer({ minimum: 0 }),
    headings: Type.Array(HeadingSchema),
    author: Type.Optional(Type.Object({ name: Type.String(), url: Type.Optional(AbsoluteUrlSchema) }, { additionalProperties: false })),
    canonicalUrl: Type.Optional(AbsoluteUrlSchema),
  },
  { $id: 'GuideDetail', title: 'GuideDetail', description: 'One published guide with its Markdown body.', additionalProperties: false },
);
export type GuideDetail = Static<typeof GuideDetailSchema>;

export const GuideListQuerySchema = Type.Object(
  {
    q: Type.Optional(
      Type.String({
        maxLength: MAX_QUERY_LENGTH,
        pattern: '^[^\\u0000-\\u001F\\u007F]*$',
        description: `Search text (at most ${MAX_QUERY_LENGTH} characters after trimming). Every term must match; the last also as a prefix; "double quotes" make a phrase. Blank means no search.`,
      }),
    ),
    limit: Type.Optional(
      Type.Integer({ minimum: 1, maximum: MAX_LIMIT, default: DEFAULT_LIMIT, description: 'Page size, in plain decimal digits.' }),
    ),
    cursor: Type.Optional(Type.String({ description: 'The nextCursor of an earlier page, unchanged.' })),
  },
  { additionalProperties: false },
);
export type GuideListQuery = Static<typeof GuideListQuerySchema>;

export const GuideParamsSchema = Type.Object({ slug: SlugSchema });
