/** Fields derived from a guide's Markdown body at import, from a real Markdown parse (mdast + GFM). */
import GithubSlugger from 'github-slugger';
import type { Nodes, Root } from 'mdast';
import { fromMarkdown } from 'mdast-util-from-markdown';
import { gfmFromMarkdown } from 'mdast-util-gfm';
import { gfm } from 'micromark-extension-gfm';
import type { Heading } from '../guides/guide.js';
import { simpleBlocks } from './markdown-simple.js';
import type { SimpleBlock } from './markdown-simple.js';

export const WORDS_PER_MINUTE = 230;

export interface MarkdownFacts {
  plainText: string;
  wordCount: number;
  readingTimeMinutes: number;
  headings: Heading[];
}

const BLOCKS = new Set(['paragraph', 'heading', 'listItem', 'tableCell', 'code', 'blockquote', 'html', 'thematicBreak']);

/** The text a reader sees: raw HTML is dropped (it is not rendered text), images give their alt text. */
function textOf(node: Nodes): string {
  switch (node.type) {
    case 'html':
      return '';
    case 'text':
    case 'inlineCode':
    case 'code':
      return node.value;
    case 'image':
      return node.alt ?? '';
    default:
      return 'children' in node ? node.children.map((child) => textOf(child as Nodes)).join('') : '';
  }
}

/** Text of the document, one block per line; `*` removed so snippets can use `**` marks unambiguously. */
function plainTextOf(root: Root): string {
  const parts: string[] = [];
  const visit = (node: Nodes): void => {
    if (node.type === 'html') return;
    if (BLOCKS.has(node.type) && node.type !== 'listItem' && node.type !== 'blockquote') {
      const text = textOf(node).replace(/\s+/g, ' ').trim();
      if (text) parts.push(text);
      return;
    }
    if ('children' in node) for (const child of node.children) visit(child as Nodes);
  };
  visit(root);
  return parts.join('\n').replaceAll('*', '');
}

export function analyzeMarkdown(markdown: string): MarkdownFacts {
  // Most guides use only headings, paragraphs and simple lists: read those without the full parser.
  const blocks = simpleBlocks(markdown);
  return blocks ? factsOf(blocks) : analyzeMarkdownWithParser(markdown);
}

/** The same facts from blocks read by the fast path (markdown-simple.ts). */
function factsOf(blocks: readonly SimpleBlock[]): MarkdownFacts {
  const slugger = new GithubSlugger();
  const headings: Heading[] = [];
  const parts: string[] = [];
  for (const block of blocks) {
    const text = block.text.replace(/\s+/g, ' ').trim();
    if (block.depth > 0) headings.push({ depth: block.depth, text, id: slugger.slug(text) });
    if (text) parts.push(text);
  }
  return withCounts(parts.join('\n').replaceAll('*', ''), headings);
}

/** The facts from the full CommonMark + GFM parse (every document the fast path declines). */
export function analyzeMarkdownWithParser(markdown: string): MarkdownFacts {
  const root = fromMarkdown(markdown, { extensions: [gfm()], mdastExtensions: [gfmFromMarkdown()] });
  const slugger = new GithubSlugger();
  const headings: Heading[] = [];
  const collect = (node: Nodes): void => {
    if (node.type === 'heading') {
      const text = textOf(node).replace(/\s+/g, ' ').trim();
      headings.push({ depth: node.depth, text, id: slugger.slug(text) });
      return;
    }
    if ('children' in node) for (const child of node.children) collect(child as Nodes);
  };
  collect(root);
  return withCounts(plainTextOf(root), headings);
}

const WORD = /[\p{L}\p{N}][\p{L}\p{N}\p{M}'’-]*/gu;
/** The same words in text that is all ASCII (no marks, no ’): a regex without Unicode classes runs several times faster. */
const ASCII_WORD = /[A-Za-z0-9][A-Za-z0-9'-]*/g;
// eslint-disable-next-line no-control-regex -- the test is for anything outside ASCII
const NON_ASCII = /[^\u0000-\u007f]/;

function withCounts(plainText: string, headings: Heading[]): MarkdownFacts {
  const wordCount = plainText.match(NON_ASCII.test(plainText) ? WORD : ASCII_WORD)?.length ?? 0;
  return {
    plainText,
    wordCount,
    readingTimeMinutes: Math.max(1, Math.ceil(wordCount / WORDS_PER_MINUTE)),
    headings,
  };
}
