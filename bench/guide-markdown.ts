/**
 * The Markdown body of one benchmark guide, written like the sample guides (content/guides/*.md):
 * headings (some repeated, as "Checklist" often is), wrapped paragraphs with `*`/`_` emphasis,
 * strong text, code spans, links, autolinks, entities and bare `&`, numbers with units, accented
 * words; bullet, ordered, nested and task lists; tables; fenced code; block quotes; the odd rule,
 * HTML comment and reference link.
 */

export interface TextSource {
  random: () => number;
  /** The next word of running text (topic words mixed with Zipf-drawn ones). */
  word(): string;
  /** An accented word (café, purée…). */
  accented(): string;
}

/** Headings many guides share, so that a guide can repeat one (github-slugger then numbers the ids). */
const STOCK_HEADINGS = [
  'Checklist',
  'Common mistakes',
  'Why it matters',
  'Example',
  'Numbers to track',
  'Step by step',
  'Before service',
  'After service',
];
const UNITS = ['g', 'kg', 'ml', 'L', 'oz', 'lb', '°C', '°F', 'min', 'hours', 'days', 'covers'];
const CODE_SPANS = ['FIFO', 'par = usage × days', '18 g', 'HACCP', 'POS', 'temp_log.csv', '> 63 °C', 'ID-204', 'SKU 1142', '2 × 5'];
const DOMAINS = ['guides.example.com', 'www.example.org', 'supplier.example.net', 'docs.example.com'];

const capitalize = (word: string): string => word.charAt(0).toUpperCase() + word.slice(1);

/** Writes guides' bodies, each about `targetWords` words long. */
export function createGuideWriter(source: TextSource): { body(targetWords: number, title: string): string } {
  const { random } = source;
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)] as T;
  const between = (min: number, max: number): number => min + Math.floor(random() * (max - min + 1));
  let written = 0;
  let references: string[] = [];

  const phrase = (count: number): string[] => {
    written += count;
    return Array.from({ length: count }, () => source.word());
  };
  const slugOf = (parts: string[]): string =>
    parts
      .join('-')
      .toLowerCase()
      .replace(/[^a-z0-9-]+/g, '');
  const number = (): string => {
    const roll = random();
    if (roll < 0.3) return `${between(1, 90)} ${pick(UNITS)}`;
    if (roll < 0.5) return `$${between(1, 40)}.${String(between(0, 99)).padStart(2, '0')}`;
    if (roll < 0.7) return `${between(2, 60)}%`;
    if (roll < 0.85) return `${between(2, 30)}–${between(31, 90)} ${pick(UNITS)}`;
    return String(between(2, 2000));
  };

  /** One decoration of a run of words, or the words as they are (most of the time). */
  const inline = (words: string[]): string => {
    const text = words.join(' ');
    // Decorations take 15% of the runs; the rest is plain prose, as in the sample guides.
    const roll = random() * 3;
    if (roll < 0.05) return `*${text}*`;
    if (roll < 0.08) return `_${text}_`;
    if (roll < 0.12) return `**${text}**`;
    if (roll < 0.13) return `__${text}__`;
    if (roll < 0.16) return `\`${random() < 0.5 ? pick(CODE_SPANS) : text}\``;
    if (roll < 0.2)
      return `[${text}](https://${pick(DOMAINS)}/${slugOf(words)}${random() < 0.2 ? ` "${capitalize(words[0] as string)}"` : ''})`;
    if (roll < 0.21) {
      references.push(slugOf(words));
      return `[${text}][${references.length}]`;
    }
    if (roll < 0.22) return `<https://${pick(DOMAINS)}/${slugOf(words)}>`;
    if (roll < 0.225) return `${text} (see www.example.com/${slugOf(words)})`;
    if (roll < 0.25) return `${text} &amp; ${source.word()}`;
    if (roll < 0.28) return `${text} & ${source.word()}`;
    if (roll < 0.285) return `${text}&nbsp;${number()}`;
    if (roll < 0.29) return `R&D ${text}`;
    if (roll < 0.3) return `${text} &#8211; ${source.word()}`;
    if (roll < 0.38) return `${text} ${number()}`;
    if (roll < 0.41) return `${text} ${source.accented()}`;
    if (roll < 0.43) return `${text}’s`;
    if (roll < 0.44) return `${text}_${source.word()}`;
    if (roll < 0.445) return `~~${text}~~`;
    if (roll < 0.448) return `${text}<br>`;
    if (roll < 0.45) return `${text} \\*`;
    return text;
  };

  /** Running text of `count` words in runs of 1–4, each possibly decorated. */
  const inlineText = (count: number): string => {
    const runs: string[] = [];
    let left = count;
    while (left > 0) {
      const size = Math.min(left, between(1, 4));
      runs.push(inline(phrase(size)));
      left -= size;
    }
    return runs.join(' ');
  };
  const sentence = (): string => {
    const text = inlineText(between(6, 22));
    return `${/^[a-z]/.test(text) ? capitalize(text) : text}${random() < 0.1 ? '?' : random() < 0.05 ? ':' : '.'}`;
  };
  /** Paragraph text, hard-wrapped near 80 columns in a third of the paragraphs (soft line breaks). */
  const paragraph = (sentences: number): string => {
    const text = Array.from({ length: sentences }, sentence).join(' ');
    if (random() > 0.33) return text;
    const lines: string[] = [];
    let line = '';
    for (const token of text.split(' ')) {
      if (line.length + token.length > 78 && line !== '') {
        lines.push(line);
        line = token;
      } else {
        line = line === '' ? token : `${line} ${token}`;
      }
    }
    lines.push(line);
    return lines.join('\n');
  };
  const item = (): string => {
    const text =
      random() < 0.2 ? `**${capitalize(phrase(between(1, 3)).join(' '))}.** ${inlineText(between(3, 14))}` : inlineText(between(3, 14));
    return /^[a-z]/.test(text) ? capitalize(text) : text;
  };

  const list = (): string => {
    const ordered = random() < 0.3;
    const task = !ordered && random() < 0.15;
    const bullet = random() < 0.8 ? '-' : '*';
    const lines: string[] = [];
    const items = between(3, 8);
    for (let i = 0; i < items; i += 1) {
      const marker = ordered ? `${i + 1}.` : task ? `${bullet} [${random() < 0.3 ? 'x' : ' '}]` : bullet;
      lines.push(`${marker} ${item()}`);
      if (random() < 0.12) {
        // A nested list, indented to the parent item's content.
        const indent = ' '.repeat(ordered ? 3 : 2);
        for (let j = between(2, 4); j > 0; j -= 1) lines.push(`${indent}- ${item()}`);
      }
    }
    // A loose list now and then: blank lines between the items make paragraphs of them.
    return random() < 0.1 ? lines.join('\n\n') : lines.join('\n');
  };

  const table = (): string => {
    const columns = between(2, 5);
    const header = Array.from({ length: columns }, (_, c) =>
      c === 0 ? capitalize(phrase(between(1, 2)).join(' ')) : capitalize(phrase(1)[0] as string),
    );
    const align = Array.from({ length: columns }, (_, c) => (c === 0 ? '---' : pick(['---', ':---:', '---:', ':---'])));
    const rows = Array.from({ length: between(2, 7) }, () =>
      Array.from({ length: columns }, (_, c) => {
        if (c === 0) return inline(phrase(between(1, 4)));
        const roll = random();
        return roll < 0.5 ? number() : roll < 0.6 ? `\`${pick(CODE_SPANS)}\`` : roll < 0.65 ? '' : inline(phrase(between(1, 3)));
      }),
    );
    return [header, align, ...rows].map((cells) => `| ${cells.join(' | ')} |`).join('\n');
  };

  const fencedCode = (): string => {
    const fence = random() < 0.85 ? '```' : '~~~';
    const language = pick(['', 'text', 'yaml', 'csv']);
    const lines = Array.from({ length: between(2, 7) }, () => {
      const words = phrase(between(1, 5));
      return language === 'yaml'
        ? `${words[0]}: ${words.slice(1).join(' ') || number()}`
        : language === 'csv'
          ? `${words.join(',')},${number()}`
          : words.join(' ');
    });
    return `${fence}${language}\n${lines.join('\n')}\n${fence}`;
  };

  const quote = (): string => {
    const lines = [`> ${paragraph(between(1, 3)).replaceAll('\n', '\n> ')}`];
    if (random() < 0.3) lines.push('>', `> — ${capitalize(source.word())} ${capitalize(source.word())}`);
    return lines.join('\n');
  };

  const block = (): string => {
    const roll = random();
    if (roll < 0.55) return paragraph(between(2, 6));
    if (roll < 0.77) return list();
    if (roll < 0.85) return table();
    if (roll < 0.9) return fencedCode();
    if (roll < 0.96) return quote();
    if (roll < 0.98) return '---';
    return '<!-- reviewed by the kitchen team -->';
  };

  const heading = (): string => {
    const depth = random() < 0.78 ? 2 : random() < 0.9 ? 3 : 4;
    const text =
      random() < 0.2
        ? pick(STOCK_HEADINGS)
        : random() < 0.1
          ? `Step ${between(1, 9)}: ${phrase(between(1, 3)).join(' ')}`
          : capitalize(inlineText(between(1, 5)));
    written += 1;
    return `${'#'.repeat(depth)} ${text}`;
  };

  return {
    body(targetWords: number, title: string): string {
      written = 0;
      references = [];
      const parts = [`# ${title}`, paragraph(between(2, 4))];
      while (written < targetWords) {
        parts.push(heading());
        for (let blocks = between(1, 4); blocks > 0 && written < targetWords; blocks -= 1) parts.push(block());
      }
      const definitions = references.map((slug, index) => `[${index + 1}]: https://${pick(DOMAINS)}/${slug}`);
      if (definitions.length > 0) parts.push(definitions.join('\n'));
      return `${parts.join('\n\n')}\n`;
    },
  };
}
