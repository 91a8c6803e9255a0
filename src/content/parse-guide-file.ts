/** One guide file (YAML front matter + Markdown body) → a GuideRecord, or every problem it has. */
import matter from 'gray-matter';
import { LineCounter, parseDocument } from 'yaml';
import type { YAMLError } from 'yaml';
import { GUIDE_STATUSES, SLUG_MAX_LENGTH, formatTimestamp, isValidSlug } from '../guides/guide.js';
import type { Author, GuideRecord, GuideStatus } from '../guides/guide.js';
import { FieldReader, isRecord } from './fields.js';
import { simpleFrontMatter } from './front-matter.js';
import { analyzeMarkdown } from './markdown.js';
import type { ContentProblem } from './problems.js';

export const FRONT_MATTER_FIELDS = [
  'title',
  'summary',
  'status',
  'publishedAt',
  'updatedAt',
  'tags',
  'language',
  'author',
  'canonicalUrl',
  'slug',
] as const;

/** Names gray-matter gives YAML after the opening `---`: every other one would pick another engine, JavaScript's among them. */
const YAML_LANGUAGES = ['', 'yaml', 'yml'];

/**
 * The front-matter language named after the opening `---` when it is not YAML, else undefined.
 * Read as gray-matter reads it (byte order mark dropped, its own language rule), so that what is
 * checked here is what it would parse.
 */
function otherFrontMatterLanguage(source: string): string | undefined {
  const text = source.replace(/^\uFEFF/, '');
  if (!text.startsWith('---') || text[3] === '-') return undefined;
  const { name } = matter.language(text);
  return YAML_LANGUAGES.includes(name.toLowerCase()) ? undefined : name;
}

const TAG = /^[\p{L}\p{N}][\p{L}\p{N} _-]{0,49}$/u;

function readLanguage(fields: FieldReader, record: Record<string, unknown>): string {
  const value = fields.text(record, 'language', { required: false, maxLength: 35 });
  if (value === undefined) return 'en';
  try {
    const [canonical] = Intl.getCanonicalLocales(value);
    if (canonical) return canonical;
  } catch {
    // reported below
  }
  fields.problem('language', 'must be a BCP 47 language tag such as en or fr-CA');
  return 'en';
}

function readTags(fields: FieldReader, record: Record<string, unknown>): string[] {
  const value = record.tags;
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) {
    fields.problem('tags', 'must be a list of strings');
    return [];
  }
  const tags: string[] = [];
  value.forEach((tag, index) => {
    if (typeof tag !== 'string' || !TAG.test(tag.trim())) {
      fields.problem(`tags[${index}]`, 'must be a word or short phrase of letters, digits, spaces, - or _ (at most 50 characters)');
    } else if (tags.includes(tag.trim())) {
      fields.problem(`tags[${index}]`, 'is listed twice');
    } else {
      tags.push(tag.trim());
    }
  });
  return tags;
}

function readAuthor(fields: FieldReader, record: Record<string, unknown>): Author | undefined {
  const value = record.author;
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string') {
    const name = fields.text(record, 'author', { required: true, maxLength: 200 });
    return name === undefined ? undefined : { name };
  }
  if (!isRecord(value)) {
    fields.problem('author', 'must be a name or a mapping with name and optional url');
    return undefined;
  }
  const authorFields = fields.nested('author');
  authorFields.onlyKeys(value, ['name', 'url']);
  const name = authorFields.text(value, 'name', { required: true, maxLength: 200 });
  const url = authorFields.url(value, 'url');
  if (name === undefined) return undefined;
  return url === undefined ? { name } : { name, url };
}

/**
 * Where the author should look for a YAML error. A line that wrongly continues the one above (an
 * indented `key: value`) is reported by yaml at the start of the line above, as a key that spans
 * two lines: the line holding that key's `:` is the one to fix.
 */
function faultOffset(errors: readonly YAMLError[]): number {
  const [first] = errors as [YAMLError];
  const spanning =
    first.code === 'BLOCK_AS_IMPLICIT_KEY'
      ? errors.find((error) => error.code === 'MULTILINE_IMPLICIT_KEY' && error.pos[0] === first.pos[0])
      : undefined;
  return spanning ? spanning.pos[1] : first.pos[0];
}

/**
 * gray-matter's YAML engine. The text it gets starts with the rest of the opening `---` line, so
 * its line numbers are the file's; a failure names the line and column the author should fix.
 */
function parseFrontMatterYaml(text: string): object {
  const lineCounter = new LineCounter();
  const document = parseDocument(text, { lineCounter, prettyErrors: false });
  if (document.errors.length === 0) return document.toJS() as object;
  const { line, col } = lineCounter.linePos(faultOffset(document.errors));
  throw new Error(`${(document.errors[0] as YAMLError).message} at line ${line}, column ${col}`);
}

export interface ParsedGuideFile {
  guide?: GuideRecord;
  problems: ContentProblem[];
}

/** `file` names the file in problems; `fileSlug` is the file name without `.md`. */
export function parseGuideFile(file: string, fileSlug: string, source: string): ParsedGuideFile {
  const problems: ContentProblem[] = [];
  const fields = new FieldReader(file, problems);
  let data: unknown;
  let body: string;
  const simple = simpleFrontMatter(source, FRONT_MATTER_FIELDS);
  if (simple) {
    ({ data, body } = simple);
  } else {
    const language = otherFrontMatterLanguage(source);
    if (language !== undefined) {
      return {
        problems: [
          {
            file,
            field: 'front matter',
            message: 'must be YAML (a block opened by --- alone); other front-matter languages are never run',
          },
        ],
      };
    }
    try {
      // A fresh options object per call keeps gray-matter from serving a cached parse of equal text.
      const parsed = matter(source, { engines: { yaml: parseFrontMatterYaml } });
      data = parsed.data;
      body = parsed.content;
    } catch (error) {
      const reason = error instanceof Error ? error.message.split('\n')[0] : 'unreadable';
      return { problems: [{ file, field: 'front matter', message: `is not valid YAML: ${reason}` }] };
    }
  }
  if (!source.trimStart().startsWith('---') || !isRecord(data) || Object.keys(data).length === 0) {
    return { problems: [{ file, field: 'front matter', message: 'is missing: start the file with a --- YAML block ---' }] };
  }
  fields.onlyKeys(data, FRONT_MATTER_FIELDS);

  const slugValue = data.slug === undefined ? fileSlug : data.slug;
  const slug = typeof slugValue === 'string' ? slugValue : '';
  if (!isValidSlug(slug)) {
    fields.problem(
      data.slug === undefined ? 'file name' : 'slug',
      `must be a slug: lowercase letters and digits in words joined by single hyphens, at most ${SLUG_MAX_LENGTH} characters`,
    );
  }
  const statusValue = data.status ?? 'published';
  const status = GUIDE_STATUSES.includes(statusValue as GuideStatus) ? (statusValue as GuideStatus) : undefined;
  if (!status) fields.problem('status', `must be one of: ${GUIDE_STATUSES.join(', ')}`);

  const title = fields.text(data, 'title', { required: true, maxLength: 200 });
  const summary = fields.text(data, 'summary', { required: true, maxLength: 500 });
  const publishedMs = fields.timestamp(data, 'publishedAt', status === 'published');
  const updatedMs = fields.timestamp(data, 'updatedAt', false);
  if (publishedMs !== undefined && updatedMs !== undefined && updatedMs < publishedMs) {
    fields.problem('updatedAt', 'must not be earlier than publishedAt');
  }
  const tags = readTags(fields, data);
  const language = readLanguage(fields, data);
  const author = readAuthor(fields, data);
  const canonicalUrl = fields.url(data, 'canonicalUrl');
  const markdown = body.replace(/^\r?\n/, '');
  if (markdown.trim() === '') fields.problem('body', 'is empty: write the guide below the front matter');
  // NUL and other control characters (tab and line breaks aside) are never text; PostgreSQL refuses NUL outright.
  // eslint-disable-next-line no-control-regex -- finding control characters is the point
  else if (/[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F]/.test(markdown))
    fields.problem('body', 'contains control characters (such as NUL); save the file as plain UTF-8 text');

  if (problems.length > 0 || !status || title === undefined || summary === undefined) return { problems };
  const facts = analyzeMarkdown(markdown);
  const publishedAt = publishedMs === undefined ? null : formatTimestamp(publishedMs);
  return {
    problems,
    guide: {
      slug,
      status,
      title,
      summary,
      tags,
      language,
      publishedAt,
      updatedAt: updatedMs === undefined ? publishedAt : formatTimestamp(updatedMs),
      ...(author ? { author } : {}),
      ...(canonicalUrl ? { canonicalUrl } : {}),
      markdown,
      ...facts,
    },
  };
}
