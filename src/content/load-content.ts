/**
 * Reads a content folder (product.yaml, resources.yaml, guides/*.md) and validates all of it,
 * collecting every problem of every file before anything is written anywhere.
 */
import { readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import { parseDocument } from 'yaml';
import type { ContentSet, GuideRecord, ProductInfo, ResourceLink } from '../guides/guide.js';
import { FieldReader, isRecord } from './fields.js';
import { parseGuideFile } from './parse-guide-file.js';
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
    if (rel !== undefined && href !== undefined && title !== undefined) links.push(type ? { rel, href, title, type } : { rel, href, title });
  });
  return links;
}

export async function loadContentFolder(dir: string, options: LoadOptions = {}): Promise<LoadedContent> {
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

  const guides: GuideRecord[] = [];
  const fileBySlug = new Map<string, string>();
  let done = 0;
  for (const name of fileNames) {
    const label = `guides/${name}`;
    let source: string;
    try {
      source = await readFile(path.join(dir, 'guides', name), 'utf8');
    } catch {
      problems.push({ file: label, message: 'is unreadable' });
      continue;
    }
    const parsed = parseGuideFile(label, name.slice(0, -'.md'.length), source);
    problems.push(...parsed.problems);
    if (parsed.guide) {
      const earlier = fileBySlug.get(parsed.guide.slug);
      if (earlier) problems.push({ file: label, field: 'slug', message: `is already used by ${earlier}` });
      else {
        fileBySlug.set(parsed.guide.slug, label);
        guides.push(parsed.guide);
      }
    }
    options.onGuideParsed?.(++done, fileNames.length);
  }
  if (problems.length > 0 || !product) return { problems, guideFileCount: fileNames.length };
  return { content: { product, resources, guides }, problems, guideFileCount: fileNames.length };
}
