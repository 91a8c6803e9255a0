import { Type } from './typebox.js';
import type { Static } from 'typebox';

/** `$id` of the shared problem schema: Fastify resolves `Problem#`, @fastify/swagger emits components.schemas.Problem. */
export const PROBLEM_SCHEMA_ID = 'Problem';

export const ProblemSchema = Type.Object(
  {
    type: Type.String({
      format: 'uri',
      description: 'URL of a page about this problem type: HTML for browsers, JSON when asked with Accept: application/json.',
    }),
    title: Type.String({ description: 'Short summary of the problem type; the same for every occurrence.' }),
    status: Type.Integer({ minimum: 400, maximum: 599, description: 'The HTTP status code of this response.' }),
    detail: Type.String({ description: 'What went wrong with this request. Never echoes request values.' }),
    errors: Type.Optional(
      Type.Array(
        Type.Object(
          {
            in: Type.Union([Type.Literal('query'), Type.Literal('path'), Type.Literal('header')]),
            name: Type.String({
              description:
                'The parameter at fault, as sent; "(unprintable name)" when the name is not plain text (markup, spaces, control or invisible characters, over 64 characters).',
            }),
            detail: Type.String({ description: 'What the parameter must be.' }),
          },
          { additionalProperties: false },
        ),
        { description: 'Present for invalid-parameter: one entry per parameter at fault.' },
      ),
    ),
  },
  {
    $id: PROBLEM_SCHEMA_ID,
    title: 'Problem',
    additionalProperties: false,
    description: 'RFC 9457 problem details, sent as application/problem+json.',
  },
);
export type Problem = Static<typeof ProblemSchema>;

/** Where route schemas point to use the shared problem schema. */
export const ProblemRef = { $ref: `${PROBLEM_SCHEMA_ID}#` } as const;
