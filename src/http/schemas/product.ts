import { Type } from './typebox.js';
import type { Static } from 'typebox';
import { AbsoluteUrlSchema } from './common.js';

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
