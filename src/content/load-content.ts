/**
 * Reads a content folder (product.yaml, resources.yaml, guides/*.md) and validates all of it,
 * collecting every problem of every file before anything is written anywhere.
 */
import { readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import { parseDocument } from 'yaml';
import type { ContentSet, GuideRecord, ProductInfo, ResourceLink } from '../guides/guide.js';
import { FieldReader, isRecord } from './fields.js';
import type { PreparedGuide } from '../store/guide-store.js';
import { readGuideFiles } from './guide-files.js';
import type { ReadGuideFilesOptions } from './guide-files.js';
import type { ContentProblem } from './problems.js';

export interface LoadedContent {
  /** Present only when there are no problems. */
  content?: ContentSet;
  problems: ContentProblem[];
  guideFileCount: number;
}

export interface LoadOptions {
  /** Called after each guide file is parsed, for progress display. */
  onGuideParsed?: (done: number, total: number) => void;
  /** Threads that read guide files (see guide-files.ts); default: one per core for a large folder, else none. */
  workers?: number;
  /** Largest guide file accepted, in bytes (MAX_GUIDE_BYTES). */
  maxGuideBytes?: number;
}

async function readYamlFile(file: string, label: string, problems: ContentProblem[], required: boolean): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' && !required) return undefined;
    problems.push({ file: label, message: required ? 'is missing or unreadable' : 'is unreadable' });
    return undefined;
  }
  const document = parseDocument(text, { uniqueKeys: true });
  if (document.errors.length > 0) {
    for (const error of document.errors) problems.push({ file: label, message: `is not valid YAML: ${error.message.split('\n')[0]}` });
    return undefined;
  }
  return document.toJS() as unknown;
}

function readProduct(value: unknown, problems: ContentProblem[]): ProductInfo | undefined {
  const fields = new FieldReader('product.yaml', problems);
  if (!isRecord(value)) {
    if (value !== undefined) fields.problem(undefined, 'must be a mapping with name and description');
    return undefined;
  }
  fields.onlyKeys(value, ['name', 'description', 'homepage', 'contact', 'license']);
  const name = fields.text(value, 'name', { required: true, maxLength: 200 });
  const description = fields.text(value, 'description', { required: true, maxLength: 1000 });
  const homepage = fields.url(value, 'homepage');
  let contact: ProductInfo['contact'];
  if (value.contact !== undefined) {
    if (!isRecord(value.contact)) fields.problem('contact', 'must be a mapping with name, url and email');
    else {
      const contactFields = fields.nested('contact');
      contactFields.onlyKeys(value.contact, ['name', 'url', 'email']);
      const email = contactFields.text(value.contact, 'email', { required: false, maxLength: 254 });
      if (email !== undefined && !/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email)) contactFields.problem('email', 'must be an email address');
      contact = {
        name: contactFields.text(value.contact, 'name', { required: false, maxLength: 200 }),
        url: contactFields.url(value.contact, 'url'),
        email,
      };
    }
  }
  let license: ProductInfo['license'];
  if (value.license !== undefined) {
    if (!isRecord(value.license)) fields.problem('license', 'must be a mapping with name and url');
    else {
      const licenseFields = fields.nested('license');
      licenseFields.onlyKeys(value.license, ['name', 'url']);
      const licenseName = licenseFields.text(value.license, 'name', { required: true, maxLength: 200 });
      const url = licenseFields.url(value.license, 'url');
      if (licenseName !== undefined) license = url === undefined ? { name: licenseName } : { name: licenseName, url };
    }
  }
  if (name === undefined || description === undefined) return undefined;
  const withoutUndefined = <T extends object>(object: T): T =>
    Object.fromEntries(Object.entries(object).filter(([, v]) => v !== undefined)) as T;
  return withoutUndefined({ name, description, homepage, contact: contact && withoutUndefined(contact), license });
}

function readResources(value: unknown, problems: ContentProblem[]): ResourceLink[] {
  const fields = new FieldReader('resources.yaml', problems);
  if (value === undefined || value === null) return [];
  if (!isRecord(value) || !Array.isArray(value.links)) {
    fields.problem('links', 'must be a list of links, each with rel, href, title and optional type');
    return [];
  }
  fields.onlyKeys(value, ['links']);
  const links: ResourceLink[] = [];
  value.links.forEach((link, index) => {
    const linkFields = fields.nested(`links[${index}]`);
    if (!isRecord(link)) {
      linkFields.problem(undefined, 'must be a mapping with rel, href, title and optional type');
      return;
    }
    linkFields.onlyKeys(link, ['rel', 'href', 'title', 'type']);
    const rel = linkFields.text(link, 'rel', { required: true, maxLength: 200 });
    if (rel !== undefined && !/^[a-z][a-z0-9.-]*$/.test(rel) && !/^https?:\/\//.test(rel)) {
      linkFields.problem('rel', 'must be a registered relation name (lowercase) or an absolute URL');
    }
    const href = linkFields.url(link, 'href', true);
    const title = linkFields.text(link, 'title', { required: true, maxLength: 200 });
    const type = linkFields.text(link, 'type', { required: false, maxLength: 200 });
    if (type !== undefined && !/^[\w.+-]+\/[\w.+-]+$/.test(type)) linkFields.problem('type', 'must be a media type such as text/html');
    if (rel !== undefined && href !== undefined && title !== undefined)
      links.push(type ? { rel, href, title, type } : { rel, href, title });
  });
  return links;
}

/** A content folder opened for reading: product.yaml, resources.yaml and the file list are read; guides come next. */
export interface ContentFolder {
  product?: ProductInfo;
  resources: ResourceLink[];
  guideFileCount: number;
  /** Every problem found so far: those of the YAML files and the file list, then each guide file's as it is read. */
  problems: ContentProblem[];
  /**
   * Reads the guide files in name order (once). Yields each valid guide while the folder has no
   * problem so far; after the first, reads on to find every other problem and yields nothing more.
   * Throws ContentRejectedError at the end when there were problems.
   */
  guides(): AsyncGenerator<PreparedGuide>;
}

/** The folder has problems (every one of them, in the order found): nothing may be imported. */
export class ContentRejectedError extends Error {
  override readonly name = 'ContentRejectedError';
  readonly problems: ContentProblem[];

  constructor(problems: ContentProblem[]) {
    super(`the content folder has ${problems.length} problem(s)`);
    this.problems = problems;
  }
}

export interface OpenOptions extends LoadOptions, ReadGuideFilesOptions {}

export async function openContentFolder(dir: string, options: OpenOptions = {}): Promise<ContentFolder> {
  const problems: ContentProblem[] = [];
  const product = readProduct(await readYamlFile(path.join(dir, 'product.yaml'), 'product.yaml', problems, true), problems);
  const resources = readResources(await readYamlFile(path.join(dir, 'resources.yaml'), 'resources.yaml', problems, false), problems);

  let fileNames: string[] = [];
  try {
    fileNames = (await readdir(path.join(dir, 'guides'), { withFileTypes: true }))
      .filter((entry) => entry.isFile() && entry.name.endsWith('.md'))
      .map((entry) => entry.name)
      .sort();
  } catch {
    problems.push({ file: 'guides/', message: 'is missing or unreadable: put one Markdown file per guide in it' });
  }

  async function* guides(): AsyncGenerator<PreparedGuide> {
    const fileBySlug = new Map<string, string>();
    let done = 0;
    for await (const result of readGuideFiles(dir, fileNames, options)) {
      problems.push(...result.problems);
      if (result.prepared) {
        const { slug } = result.prepared.guide;
        const earlier = fileBySlug.get(slug);
        if (earlier) problems.push({ file: result.file, field: 'slug', message: `is already used by ${earlier}` });
        else {
          fileBySlug.set(slug, result.file);
          if (problems.length === 0) yield result.prepared;
        }
      }
      options.onGuideParsed?.(++done, fileNames.length);
    }
    if (problems.length > 0) throw new ContentRejectedError(problems);
  }
  return { ...(product ? { product } : {}), resources, guideFileCount: fileNames.length, problems, guides };
}

/** Reads and validates a whole folder into memory: the content when it has no problem, else every problem. */
export async function loadContentFolder(dir: string, options: OpenOptions = {}): Promise<LoadedContent> {
  const folder = await openContentFolder(dir, options);
  const guides: GuideRecord[] = [];
  try {
    for await (const { guide } of folder.guides()) guides.push(guide);
  } catch (error) {
    if (!(error instanceof ContentRejectedError)) throw error;
  }
  const { product, resources, problems, guideFileCount } = folder;
  if (problems.length > 0 || !product) return { problems, guideFileCount };
  return { content: { product, resources, guides }, problems, guideFileCount };
}
