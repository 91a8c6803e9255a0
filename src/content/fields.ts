/**
 * Small validators for authored YAML values. Each returns the cleaned value or records a problem;
 * the caller goes on, so that one run lists every problem of every file.
 */
import type { ContentProblem } from './problems.js';

export class FieldReader {
  private readonly file: string;
  private readonly problems: ContentProblem[];
  private readonly prefix: string;

  constructor(file: string, problems: ContentProblem[], prefix = '') {
    this.file = file;
    this.problems = problems;
    this.prefix = prefix;
  }

  problem(field: string | undefined, message: string): void {
    this.problems.push({ file: this.file, field: field === undefined ? undefined : `${this.prefix}${field}`, message });
  }

  nested(prefix: string): FieldReader {
    return new FieldReader(this.file, this.problems, `${this.prefix}${prefix}.`);
  }

  /** Reports keys outside `allowed`, naming the accepted ones. */
  onlyKeys(record: Record<string, unknown>, allowed: readonly string[]): void {
    for (const key of Object.keys(record)) {
      if (!allowed.includes(key)) this.problem(key, `unknown field; accepted fields: ${allowed.join(', ')}`);
    }
  }

  text(record: Record<string, unknown>, field: string, options: { required: boolean; maxLength: number }): string | undefined {
    const value = record[field];
    if (value === undefined || value === null) {
      if (options.required) this.problem(field, 'is required');
      return undefined;
    }
    if (typeof value !== 'string' || value.trim() === '') {
      this.problem(field, 'must be a non-empty string');
      return undefined;
    }
    const trimmed = value.trim();
    if ([...trimmed].length > options.maxLength) {
      this.problem(field, `must be at most ${options.maxLength} characters`);
      return undefined;
    }
    // eslint-disable-next-line no-control-regex -- finding control characters is the point
    if (/[\u0000-\u0008\u000B-\u001F\u007F]/.test(trimmed)) {
      this.problem(field, 'must not contain control characters');
      return undefined;
    }
    return trimmed;
  }

  url(record: Record<string, unknown>, field: string, required = false): string | undefined {
    const value = this.text(record, field, { required, maxLength: 2000 });
    if (value === undefined) return undefined;
    try {
      const parsed = new URL(value);
      if (parsed.protocol === 'https:' || parsed.protocol === 'http:') return value;
    } catch {
      // reported below
    }
    this.problem(field, 'must be an absolute http(s) URL');
    return undefined;
  }

  /** An RFC 3339 timestamp or a plain date (midnight UTC), as epoch milliseconds. */
  timestamp(record: Record<string, unknown>, field: string, required: boolean): number | undefined {
    const value = record[field];
    if (value === undefined || value === null) {
      if (required) this.problem(field, 'is required for a published guide');
      return undefined;
    }
    const text = value instanceof Date ? value.toISOString() : String(value);
    const isDate = /^\d{4}-\d{2}-\d{2}$/.test(text);
    const isDateTime = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(?:\.\d{1,3})?(?:[Zz]|[+-]\d{2}:\d{2})$/.test(text);
    const ms = isDate ? Date.parse(`${text}T00:00:00Z`) : isDateTime ? Date.parse(text.replace(' ', 'T')) : NaN;
    if (Number.isNaN(ms) || !(isDate || isDateTime) || !this.isRealDate(text)) {
      this.problem(field, 'must be an RFC 3339 timestamp such as 2026-03-01T09:00:00Z, or a date such as 2026-03-01');
      return undefined;
    }
    return ms;
  }

  private isRealDate(text: string): boolean {
    const [year, month, day] = text.slice(0, 10).split('-').map(Number) as [number, number, number];
    const date = new Date(Date.UTC(year, month - 1, day));
    return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
  }
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Date);
}
