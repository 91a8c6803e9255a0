import type { TSchema, TUnsafe } from 'typebox';
import { Type } from './typebox.js';
import { SLUG_MAX_LENGTH, SLUG_PATTERN } from '../guides/guide.js';

export const TimestampSchema = Type.String({
  format: 'date-time',
  description: 'RFC 3339 timestamp in UTC.',
  examples: ['2026-03-01T09:00:00Z'],
});
export const AbsoluteUrlSchema = Type.String({ format: 'uri' });
export const SlugSchema = Type.String({
  pattern: SLUG_PATTERN,
  maxLength: SLUG_MAX_LENGTH,
  description: 'Lowercase words of letters and digits joined by single hyphens.',
  examples: ['reduce-food-waste'],
});

/** The query of an operation that takes no parameters: any parameter is unknown, hence a 400. */
export const NoQuerySchema = Type.Object({}, { additionalProperties: false });

/**
 * A reference to a shared schema (one with an `$id`, added with app.addSchema): Fastify resolves
 * it, and @fastify/swagger writes it as `#/components/schemas/<$id>`, so clients get named types.
 */
export function refTo<T>(schema: TSchema & { $id?: string }): TUnsafe<T> {
  if (schema.$id === undefined) throw new Error('refTo: the schema has no $id');
  return Type.Unsafe<T>({ $ref: `${schema.$id}#` });
}
