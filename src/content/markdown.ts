/** Fields derived from a guide's Markdown body at import, from a full CommonMark + GFM parse (markdown-it). */
import GithubSlugger from 'github-slugger';
import MarkdownIt from 'markdown-it';
import type { Token } from 'markdown-it';
import footnote from 'markdown-it-footnote';
import type { Heading } from '../guides/guide.js';

export const WORDS_PER_MINUTE = 230;

export interface MarkdownFacts {
  plainText: string;
  wordCount: number;
  readingTimeMinutes: number;
  headings: Heading[];
}

// The default preset is CommonMark with GFM tables and strikethrough; GFM footnotes come from the
// plugin. Raw HTML is recognised, so that it is dropped rather than read as text; linkify is off,
// as a bare URL's text is the same whether or not it becomes a link. The plugin's last step moves
// the used footnotes to the end for rendering, dropping the unused ones; without it every
// definition stays where it is written, as GFM reads them.
const parser = new MarkdownIt({ html: true }).use(footnote);
parser.core.ruler.disable('footnote_tail');
// Link destinations are normalized (percent-encoded, punycode) for rendering an href; only link
// text counts here, so destinations stay as written. validateLink still sees them and decides.
parser.normalizeLink = (url) => url;

/** A GFM task list item's check (`[ ]`, `[x]`) in the source of its first paragraph: whitespace follows, and (the source being trimmed) more text. */
const TASK_CHECK = /^\[[ \t\nxX]\][ \t\n]/;
/** The same check at the start of the paragraph's first text. */
const CHECK_TEXT = /^\[[ \txX]\]/;

/**
 * The text a reader sees of an inline run: raw HTML is dropped (it is not rendered text), images
 * give their alt text (the source of any HTML in it included, as in the alt attribute), a soft
 * line break is a space and a hard one joins its neighbours.
 */
function inlineText(tokens: readonly Token[], inAlt = false): string {
  let text = '';
  for (const token of tokens) {
    switch (token.type) {
      case 'text':
      case 'code_inline':
        text += token.content;
        break;
      case 'softbreak':
        // As a line break would be: whitespace, which collapseSpaces makes one space.
        text += ' ';
        break;
      case 'image':
        text += inlineText(token.children ?? [], true);
        break;
      case 'html_inline':
        if (inAlt) text += token.content;
        break;
      default:
        // Markup (emphasis, links, strikethrough, footnote references) and hard breaks add no text.
        break;
    }
  }
  return text;
}

export function analyzeMarkdown(markdown: string): MarkdownFacts {
  const tokens = parser.parse(markdown, {});
  const slugger = new GithubSlugger();
  const headings: Heading[] = [];
  // One part a block of text (paragraph, heading, table cell, code block), in document order.
  const parts: string[] = [];
  for (let i = 0; i < tokens.length; i += 1) {
    const token = tokens[i] as Token;
    let raw: string;
    if (token.type === 'inline') {
      const children = token.children ?? [];
      const first = children[0];
      // A task list item's check is list syntax, not text (as GFM reads `- [x] done`).
      const isTaskItem =
        tokens[i - 1]?.type === 'paragraph_open' && tokens[i - 2]?.type === 'list_item_open' && TASK_CHECK.test(token.content);
      if (isTaskItem && first?.type === 'text' && CHECK_TEXT.test(first.content)) {
        raw = first.content.slice(3) + inlineText(children.slice(1));
      } else {
        raw = inlineText(children);
      }
    } else if (token.type === 'fence' || token.type === 'code_block') {
      raw = token.content;
    } else {
      continue;
    }
    const text = collapseSpaces(raw);
    const opener = tokens[i - 1];
    if (token.type === 'inline' && opener?.type === 'heading_open') {
      headings.push({ depth: Number(opener.tag.slice(1)), text, id: slugger.slug(text) });
    }
    if (text) parts.push(text);
  }
  // `*` removed so that snippets can use `**` marks unambiguously.
  return withCounts(parts.join('\n').replaceAll('*', ''), headings);
}

const SPACES = /\s+/g;
/** Whitespace that collapseSpaces changes: two in a row, any but a plain space, or a space at either end. */
const ODD_SPACE = /\s\s|[^\S ]|^ | $/;

/** text.replace(/\s+/g, ' ').trim(), without making a new string when that changes nothing (most blocks). */
function collapseSpaces(text: string): string {
  return ODD_SPACE.test(text) ? text.replace(SPACES, ' ').trim() : text;
}

/** Per ASCII code: 1 starts a word (letter, digit), 2 continues one (also ' and -), 0 neither. */
const ASCII_WORD_CODES = new Uint8Array(128);
for (let code = 0; code < 128; code += 1) {
  const char = String.fromCharCode(code);
  ASCII_WORD_CODES[code] = /[A-Za-z0-9]/.test(char) ? 1 : /['-]/.test(char) ? 2 : 0;
}
const WORD_START = /^[\p{L}\p{N}]$/u;
const WORD_PART = /^[\p{M}’]$/u;

/**
 * How many words a text has, a word being a letter or digit and then any letters, digits, marks,
 * apostrophes and hyphens (Unicode classes); counted without making the words (a guide has
 * hundreds), and only the few characters outside ASCII are tested by regex.
 */
function countWords(text: string): number {
  let count = 0;
  let inWord = false;
  for (let i = 0; i < text.length; i += 1) {
    const code = text.charCodeAt(i);
    let kind: number;
    if (code < 128) {
      kind = ASCII_WORD_CODES[code] as number;
    } else {
      const point = text.codePointAt(i) as number;
      if (point > 0xffff) i += 1;
      const char = String.fromCodePoint(point);
      kind = WORD_START.test(char) ? 1 : WORD_PART.test(char) ? 2 : 0;
    }
    if (kind === 1 && !inWord) count += 1;
    // A letter or digit starts a word or goes on with it; a mark, apostrophe or hyphen only goes on with one.
    inWord = kind === 1 || (kind === 2 && inWord);
  }
  return count;
}

function withCounts(plainText: string, headings: Heading[]): MarkdownFacts {
  const wordCount = countWords(plainText);
  return {
    plainText,
    wordCount,
    readingTimeMinutes: Math.max(1, Math.ceil(wordCount / WORDS_PER_MINUTE)),
    headings,
  };
}
