/**
 * Content safety (contract, "Content safety"), through `guides import` as users run it: front
 * matter is YAML only and nothing else in a guide file is ever evaluated; a guide that is not
 * UTF-8 text, or is larger than MAX_GUIDE_BYTES, is invalid. An invalid file fails the import
 * (exit 1, the file named with its reason) and changes nothing.
 */
import { cpSync, existsSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { makeTempDir } from '../helpers/build-test-app.js';
import { guides, ROOT, storeSnapshot } from '../helpers/cli.js';
import type { CliResult } from '../helpers/cli.js';

const TINY = path.join(ROOT, 'test', 'fixtures', 'content-tiny');

const importFolder = (dir: string, db: string, env: Record<string, string> = {}): Promise<CliResult> =>
  guides(['import', dir], { DATABASE_URL: `sqlite:${db}`, ...env });
const snapshot = storeSnapshot;

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A database holding the tiny fixture, and a copy of that fixture to add files to. */
async function setUp(): Promise<{ dir: string; content: string; db: string; before: string }> {
  const dir = makeTempDir('guides-content-safety-');
  dirs.push(dir);
  const content = path.join(dir, 'content');
  cpSync(TINY, content, { recursive: true });
  const db = path.join(dir, 'g.db');
  expect((await importFolder(content, db)).code).toBe(0);
  return { dir, content, db, before: await snapshot(db) };
}

const guide = (name: string, text: string | Buffer, content: string): void => writeFileSync(path.join(content, 'guides', name), text);

describe('front matter is YAML only', () => {
  it('refuses JavaScript, CoffeeScript, JSON, TOML and every other language without running any of it', async () => {
    const { dir, content, db, before } = await setUp();
    const marker = path.join(dir, 'ran');
    // Each would write the marker file if its front matter were evaluated.
    const script = `{ title: (require('node:fs').writeFileSync(${JSON.stringify(marker)}, 'x'), 'Ran'), summary: 'Ran.', publishedAt: '2026-01-01' }`;
    guide('as-js.md', `---js\n${script}\n---\nBody.\n`, content);
    guide('as-javascript.md', `---javascript\n${script}\n---\nBody.\n`, content);
    guide('as-upper-js.md', `\ufeff--- JS \n${script}\n---\nBody.\n`, content);
    guide('as-coffee.md', `---coffee\ntitle: 'Coffee'\n---\nBody.\n`, content);
    guide('as-json.md', '---json\n{"title": "Json", "summary": "Json.", "publishedAt": "2026-01-01"}\n---\nBody.\n', content);
    guide('as-toml.md', '---toml\ntitle = "Toml"\n---\nBody.\n', content);
    guide('as-proto.md', '---constructor\ntitle: x\n---\nBody.\n', content);
    const result = await importFolder(content, db);
    expect(existsSync(marker)).toBe(false);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('Import refused: 7 problem(s) found; nothing was changed.');
    for (const name of ['as-js', 'as-javascript', 'as-upper-js', 'as-coffee', 'as-json', 'as-toml', 'as-proto']) {
      expect(result.stderr).toContain(`guides/${name}.md [front matter]: must be YAML`);
    }
    expect(await snapshot(db)).toBe(before);
  });

  it('still reads front matter that names YAML after the opening ---', async () => {
    const { content, db } = await setUp();
    guide('named-yaml.md', '---yaml\ntitle: Named\nsummary: Named YAML.\npublishedAt: 2026-01-01\n---\nBody.\n', content);
    const result = await importFolder(content, db);
    expect(result.stderr).toBe('');
    expect(result.stdout).toContain('created: named-yaml');
  });
});

describe('guide files are UTF-8 text of a bounded size', () => {
  it('refuses a file that is not valid UTF-8 instead of importing replacement characters', async () => {
    const { content, db, before } = await setUp();
    guide(
      'latin-1.md',
      Buffer.concat([
        Buffer.from('---\ntitle: Caf'),
        Buffer.from([0xe9]),
        Buffer.from('\nsummary: Latin-1.\npublishedAt: 2026-01-01\n---\nBody.\n'),
      ]),
      content,
    );
    const result = await importFolder(content, db);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('Import refused: 1 problem(s) found; nothing was changed.');
    expect(result.stderr).toContain('guides/latin-1.md: is not valid UTF-8 text');
    expect(await snapshot(db)).toBe(before);
  });

  it('refuses a file larger than MAX_GUIDE_BYTES, 1 MiB unless set', async () => {
    const { content, db, before } = await setUp();
    const head = '---\ntitle: Big\nsummary: Big.\npublishedAt: 2026-01-01\n---\n';
    guide('big.md', head + 'word '.repeat((1024 * 1024) / 5), content);
    guide('small.md', head + 'word '.repeat(500), content);
    const result = await importFolder(content, db);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('Import refused: 1 problem(s) found; nothing was changed.');
    expect(result.stderr).toContain('guides/big.md: is larger than 1048576 bytes (MAX_GUIDE_BYTES)');
    const lower = await importFolder(content, db, { MAX_GUIDE_BYTES: '2048' });
    expect(lower.stderr).toContain('Import refused: 2 problem(s) found; nothing was changed.');
    expect(lower.stderr).toContain('guides/small.md: is larger than 2048 bytes (MAX_GUIDE_BYTES)');
    expect(await snapshot(db)).toBe(before);
    rmSync(path.join(content, 'guides', 'big.md'));
    expect((await importFolder(content, db)).stdout).toContain('created: small');
  });

  it('reports an invalid MAX_GUIDE_BYTES as a configuration problem', async () => {
    const { content, db } = await setUp();
    const result = await importFolder(content, db, { MAX_GUIDE_BYTES: '1MB' });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('MAX_GUIDE_BYTES must be a whole number from 1024 to 268435456');
  });
});
