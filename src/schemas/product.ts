import { Type } from './typebox.js';
import type { Static } from 'typebox';
import { AbsoluteUrlSchema } from './common.js';
import { DEFAULT_LIMIT, MAX_LIMIT, MAX_QUERY_LENGTH } from '../guides/limits.js';
import { SOFTWARE_VERSION } from '../lib/version.js';

export const ProductSchema = Type.Object(
  {
    name: Type.String(),
    description: Type.String(),
    homepage: Type.Optional(AbsoluteUrlSchema),
    apiVersion: Type.Literal('v1'),
    softwareVersion: Type.String(),
    capabilities: Type.Object(
      {
        readOnly: Type.Literal(true),
        search: Type.Object({ parameter: Type.Literal('q'), maxLength: Type.Integer() }, { additionalProperties: false }),
        pagination: Type.Object(
          {
            style: Type.Literal('cursor'),
            cursorParameter: Type.Literal('cursor'),
            limitParameter: Type.Literal('limit'),
            defaultLimit: Type.Integer(),
            maxLimit: Type.Integer(),
          },
          { additionalProperties: false },
        ),
        formats: Type.Array(Type.String()),
      },
      { additionalProperties: false },
    ),
    links: Type.Object(
      {
        guides: AbsoluteUrlSchema,
        resources: AbsoluteUrlSchema,
        openapi: AbsoluteUrlSchema,
        docs: AbsoluteUrlSchema,
        mcp: AbsoluteUrlSchema,
      },
      { additionalProperties: false },
    ),
  },
  {
    $id: 'Product',
    title: 'Product',
    description: 'What this service is, what its API can do, and where to go next.',
    additionalProperties: false,
  },
);
export type Product = Static<typeof ProductSchema>;

/** The product document for the content's identity: the route serves it, the OpenAPI example shows it. */
export function productBody(identity: { name: string; description: string; homepage?: string }, base: string): Product {
  return {
    name: identity.name,
    description: identity.description,
    ...(identity.homepage ? { homepage: identity.homepage } : {}),
    apiVersion: 'v1',
    softwareVersion: SOFTWARE_VERSION,
    capabilities: {
      readOnly: true,
      search: { parameter: 'q', maxLength: MAX_QUERY_LENGTH },
      pagination: { style: 'cursor', cursorParameter: 'cursor', limitParameter: 'limit', defaultLimit: DEFAULT_LIMIT, maxLimit: MAX_LIMIT },
      formats: ['application/json', 'text/markdown'],
    },
    links: {
      guides: `${base}/api/v1/guides`,
      resources: `${base}/api/v1/resources`,
      openapi: `${base}/openapi.json`,
      docs: `${base}/docs`,
      mcp: `${base}/mcp`,
    },
  };
}
