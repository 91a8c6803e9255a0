/**
 * A fast path for the front matter most guides have: `---`, then one `field: value` line per known
 * field, each value a double-quoted string with simple escapes, a plain word or phrase, or a flow
 * list of plain words (`[a, b]`), or `author:` with indented `name:` and `url:` lines, then `---`.
 * Read line by line, it gives exactly what gray-matter with the YAML parser gives
 * (test/content/front-matter.test.ts compares them on generated and real files), in a fraction of
 * the time: gray-matter copies the whole file into a Buffer and the YAML parser builds a full
 * document for a few short lines, which was a fifth of reading a guide.
 *
 * Anything else (comments, blank lines, other indentation or quoting, escapes, anchors, numbers,
 * booleans, null, unknown or repeated fields, a byte order mark, CR line ends…) makes it answer
 * undefined, and gray-matter and the YAML parser read the file as before.
 */

export interface FrontMatter {
  data: Record<string, unknown>;
  /** The text after the closing delimiter line, as gray-matter's `content`. */
  body: string;
}

const LINE = /^([A-Za-z]+): (.*)$/;
/** A field holding a mapping: its name alone, then its fields indented by two spaces. */
const MAPPING_START = /^([A-Za-z]+):$/;
const MAPPING_LINE = /^ {2}([A-Za-z]+): (.*)$/;
/** Fields that may hold a mapping, with the fields it may have. */
const MAPPINGS: Record<string, readonly string[]> = { author: ['name', 'url'] };
/** A double-quoted string whose escapes mean the same in YAML and JSON, without characters YAML may treat otherwise. */
// eslint-disable-next-line no-control-regex -- control characters are exactly what this must refuse
const DOUBLE_QUOTED = /^"(?:[^"\\\u0000-\u001f\u007f-\u009f\u2028\u2029\ufeff\ufffe\uffff\ud800-\udfff]|\\["\\/bfnrt])*"$/;
/**
 * A plain scalar that cannot hold anything but text: starts with a letter or digit, has no `#` (a
 * comment after a space) and no control or special character; in a flow list, no flow indicator
 * or quote either.
 */
// eslint-disable-next-line no-control-regex -- control characters are exactly what this must refuse
const PLAIN = /^[\p{L}\p{N}][^\u0000-\u001f\u007f-\u009f\u2028\u2029\ufeff\ufffe\uffff\ud800-\udfff#]*$/u;
const FLOW_PLAIN = /^[A-Za-z0-9][A-Za-z0-9 _./?=&%+@-]*$/;
/** Plain scalars that YAML's core schema reads as null, a boolean or a number (or could: a superset). */
const NOT_A_STRING =
  /^(?:null|Null|NULL|true|True|TRUE|false|False|FALSE|[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+|[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?)$/;

/** A plain scalar that YAML reads as exactly this string, in block (or, `inFlow`, flow) context. */
function isPlainString(value: string, inFlow: boolean): boolean {
  return (
    (inFlow ? FLOW_PLAIN : PLAIN).test(value) &&
    !NOT_A_STRING.test(value) &&
    !value.endsWith(' ') &&
    !value.endsWith(':') &&
    !value.includes(': ')
  );
}

function readValue(raw: string): { value: unknown } | undefined {
  if (raw.startsWith('"')) return DOUBLE_QUOTED.test(raw) ? { value: JSON.parse(raw) as string } : undefined;
  if (raw.startsWith('[')) {
    if (!raw.endsWith(']')) return undefined;
    const inner = raw.slice(1, -1);
    if (inner === '') return { value: [] };
    const items = inner.split(', ');
    return items.every((item) => isPlainString(item, true)) ? { value: items } : undefined;
  }
  return isPlainString(raw, false) ? { value: raw } : undefined;
}

/**
 * The front matter and body of `source` when it has the simple shape above, else undefined.
 * `fields`: the accepted field names (anything else goes the slow way, which reports it).
 */
export function simpleFrontMatter(source: string, fields: readonly string[]): FrontMatter | undefined {
  if (!source.startsWith('---\n')) return undefined;
  // As gray-matter: the block ends at the first line starting with ---, the body follows it.
  const rest = source.slice(3);
  const close = rest.indexOf('\n---');
  if (close <= 0 || rest.includes('\r')) return undefined;
  const data: Record<string, unknown> = {};
  /** The mapping being read (after `author:`) and the fields it may have. */
  let mapping: { value: Record<string, unknown>; fields: readonly string[] } | undefined;
  for (const line of rest.slice(1, close).split('\n')) {
    const inner = mapping && MAPPING_LINE.exec(line);
    if (mapping && inner) {
      const [, key, raw] = inner as unknown as [string, string, string];
      const read = readValue(raw);
      if (!mapping.fields.includes(key) || Object.hasOwn(mapping.value, key) || !read || Array.isArray(read.value)) return undefined;
      mapping.value[key] = read.value;
      continue;
    }
    if (mapping && Object.keys(mapping.value).length === 0) return undefined;
    mapping = undefined;
    const start = MAPPING_START.exec(line);
    const match = start ?? LINE.exec(line);
    if (!match) return undefined;
    const key = match[1] as string;
    if (!fields.includes(key) || Object.hasOwn(data, key)) return undefined;
    if (start) {
      if (!Object.hasOwn(MAPPINGS, key)) return undefined;
      const mappingFields = MAPPINGS[key] as readonly string[];
      mapping = { value: {}, fields: mappingFields };
      data[key] = mapping.value;
      continue;
    }
    const read = readValue(match[2] as string);
    if (!read) return undefined;
    data[key] = read.value;
  }
  if (mapping && Object.keys(mapping.value).length === 0) return undefined;
  let body = rest.slice(close + '\n---'.length);
  if (body.startsWith('\n')) body = body.slice(1);
  return { data, body };
}
