/**
 * How a search snippet shows the plain text it is cut from, the same from either store.
 *
 * A guide's plain text holds one block (heading, paragraph, list item, table cell) a line. A
 * snippet is one line: a run of white space becomes one space, except where it breaks a block
 * that ends without a clause's punctuation. There ` · ` marks the break, so a heading does not
 * read as the start of the sentence under it, nor a list item as part of the next one:
 * `Measure first · Weigh every bin…` rather than `Measure first Weigh every bin…`.
 * A break after `.`, `!`, `?`, `:`, `;` or `…` (perhaps followed by a hit's closing `**`) is
 * already visible and becomes one space. A snippet cut from the middle of its text starts
 * and/or ends with `…`.
 */

const BLOCK_BREAK = ' · ';

const SPACE_RUN = /\s+/g;
const CLAUSE_END = /[.!?:;…]/;
const ASTERISK = 42;

/**
 * `text` on one line (see above). Its first character is taken to follow a word, so a gap
 * between two words that starts with a line break gets ` · `: pass whole snippets trimmed.
 */
export function snippetSpacing(text: string): string {
  if (!text.includes('\n')) return text.replace(SPACE_RUN, ' ');
  return text.replace(SPACE_RUN, (space: string, offset: number) => {
    if (!space.includes('\n')) return ' ';
    let before = offset - 1;
    while (before >= 0 && text.charCodeAt(before) === ASTERISK) before -= 1;
    return before >= 0 && CLAUSE_END.test(text.charAt(before)) ? ' ' : BLOCK_BREAK;
  });
}
