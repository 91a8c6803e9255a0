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
    const text = collapseSpaces(block.text);
    if (block.depth > 0) headings.push({ depth: block.depth, text, id: slugger.slug(text) });
    // As joining the parts with \n and then removing every `*` (which no \n is).
    if (text) parts.push(text.includes('*') ? text.replaceAll('*', '') : text);
  }
  return withCounts(parts.join('\n'), headings);
}

const SPACES = /\s+/g;
/** Whitespace that collapseSpaces changes: two in a row, any but a plain space, or a space at either end. */
const ODD_SPACE = /\s\s|[^\S ]|^ | $/;

/** text.replace(/\s+/g, ' ').trim(), without making a new string when that changes nothing (most blocks). */
function collapseSpaces(text: string): string {
  return ODD_SPACE.test(text) ? text.replace(SPACES, ' ').trim() : text;
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
// In all-ASCII text (no marks, no ’) the words are the matches of [A-Za-z0-9][A-Za-z0-9'-]*, which countAsciiWords counts.
// eslint-disable-next-line no-control-regex -- the test is for anything outside ASCII
const NON_ASCII = /[^\u0000-\u007f]/;

/** Per ASCII code: 1 starts a word (letter, digit), 2 continues one (also ' and -), 0 neither. */
const ASCII_WORD_CODES = new Uint8Array(128);
for (let code = 0; code < 128; code += 1) {
  const char = String.fromCharCode(code);
  ASCII_WORD_CODES[code] = /[A-Za-z0-9]/.test(char) ? 1 : /['-]/.test(char) ? 2 : 0;
}

/** How many words (see above) an all-ASCII text has, counted without making them (a guide has hundreds). */
function countAsciiWords(text: string): number {
  let count = 0;
  let i = 0;
  while (i < text.length) {
    if (ASCII_WORD_CODES[text.charCodeAt(i)] === 1) {
      count += 1;
      i += 1;
      while (i < text.length && ASCII_WORD_CODES[text.charCodeAt(i)] !== 0) i += 1;
    } else {
      i += 1;
    }
  }
  return count;
}

function withCounts(plainText: string, headings: Heading[]): MarkdownFacts {
  const wordCount = NON_ASCII.test(plainText) ? (plainText.match(WORD)?.length ?? 0) : countAsciiWords(plainText);
  return {
    plainText,
    wordCount,
    readingTimeMinutes: Math.max(1, Math.ceil(wordCount / WORDS_PER_MINUTE)),
    headings,
  };
}
