import { Type } from 'typebox';

export const ProblemSchema = Type.Object({
  type: Type.String({ format: 'uri', description: 'URL of a page about this problem type.' }),
  title: Type.String(),
  status: Type.Integer({ minimum: 400, maximum: 599 }),
  detail: Type.String(),
  errors: Type.Optional(Type.Array(Type.Object({
    in: Type.Union([Type.Literal('query'), Type.Literal('path'), Type.Literal('header')]),
    name: Type.String(),
    detail: Type.String(),
  }, { additionalProperties: false }))),
}, { additionalProperties: false, description: 'RFC 9457 problem details.' });
