import { Type } from './typebox.js';
import { SLUG_MAX_LENGTH, SLUG_PATTERN } from '../../guides/guide.js';

export const TimestampSchema = Type.String({ format: 'date-time', description: 'RFC 3339 timestamp in UTC.', examples: ['2026-03-01T09:00:00Z'] });
export const AbsoluteUrlSchema = Type.String({ format: 'uri' });
export const SlugSchema = Type.String({
  pattern: SLUG_PATTERN,
  maxLength: SLUG_MAX_LENGTH,
  description: 'Lowercase words of letters and digits joined by single hyphens.',
  examples: ['reduce-food-waste'],
});

/** The query of an operation that takes no parameters: any parameter is unknown, hence a 400. */
export const NoQuerySchema = Type.Object({}, { additionalProperties: false });
