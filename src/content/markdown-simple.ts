/**
 * A fast path for the Markdown most guides are written in: ATX headings, paragraphs and one-line
 * list items, with `*` emphasis. For such a document this reads the blocks line by line, about a
 * hundred times faster than the full CommonMark + GFM parse, and gives exactly the same facts
 * (test/content/markdown.test.ts checks that on generated and real documents). Anything else
 * (links, code, HTML, tables, quotes, setext headings, nested or continued list items, escapes,
 * entities, `_`, tabs…) makes it answer undefined, and the full parser reads the document.
 */

export interface SimpleBlock {
  /** 0 for a paragraph or list item; 1–6 for a heading. */
  depth: number;
  /** The block's text with Markdown syntax removed, lines joined by `\n` (not yet collapsed). */
  text: string;
}

/**
 * Characters that start inline syntax whose text differs from its source (code, links, images,
 * HTML, escapes, entities, `_` emphasis, GFM strikethrough and tables), or whitespace rules we do
 * not reproduce (tabs, carriage returns, control characters, byte order marks).
 */
// eslint-disable-next-line no-control-regex -- control characters are exactly what this must find
const UNSAFE = /[`<[\]\\&|~_\t\r\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f\ufeff]/;
const HEADING = /^(#{1,6}) +(.*)$/;
const LIST_ITEM = /^(?:[-*+]|\d{1,9}[.)]) (.*)$/;
/** Lines that could be a thematic break or a setext underline, or a list marker alone (an empty item). */
const RULE_LIKE = /^(?:[-*_= ]+|\+|\d{1,9}[.)])$/;
/** List item content that would open another block inside the item. */
const NESTED_START = /^(?:[#>+=]|[-*+](?: |$)|\d{1,9}[.)](?: |$))/;
/** A line ending with two spaces is a hard break, whose text joins its neighbours without a space. */
const HARD_BREAK = / {2,}$/;

/** The blocks of a simple document, or undefined when the full parser must read it. */
export function simpleBlocks(markdown: string): SimpleBlock[] | undefined {
  if (UNSAFE.test(markdown)) return undefined;
  const blocks: SimpleBlock[] = [];
  let paragraph: string[] | undefined;
  let previous: 'blank' | 'paragraph' | 'item' | 'heading' = 'blank';
  const endParagraph = (): void => {
    if (paragraph) blocks.push({ depth: 0, text: paragraph.join('\n') });
    paragraph = undefined;
  };
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i += 1) {
    const line = lines[i] as string;
    if (line.trim() === '') {
      endParagraph();
      previous = 'blank';
      continue;
    }
    // Indentation means code or continuation; a leading `>` a quote; rule-like lines may be setext or breaks.
    if (line.startsWith(' ') || line.startsWith('>') || RULE_LIKE.test(line) || HARD_BREAK.test(line)) return undefined;
    if (line.startsWith('#')) {
      const heading = HEADING.exec(line);
      const text = heading?.[2]?.trim() ?? '';
      if (!heading || text === '' || text.endsWith('#') || text.includes('*')) return undefined;
      endParagraph();
      blocks.push({ depth: (heading[1] as string).length, text });
      previous = 'heading';
      continue;
    }
    const item = LIST_ITEM.exec(line);
    if (item) {
      const content = (item[1] as string).trim();
      // After a paragraph line a list may or may not interrupt it (CommonMark's rules differ by marker).
      if (previous === 'paragraph' || content === '' || NESTED_START.test(content) || RULE_LIKE.test(content)) return undefined;
      endParagraph();
      blocks.push({ depth: 0, text: content });
      previous = 'item';
      continue;
    }
    // A paragraph line right after a list item would continue the item lazily.
    if (previous === 'item') return undefined;
    (paragraph ??= []).push(line);
    previous = 'paragraph';
  }
  endParagraph();
  return blocks;
}
