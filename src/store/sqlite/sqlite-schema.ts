/** Versioned SQLite migrations. Applied in order inside one IMMEDIATE transaction each. */

export interface Migration {
  version: number;
  description: string;
  sql: string;
}

export const SQLITE_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description: 'guides, published-only access paths, full-text index, metadata',
    sql: `
      CREATE TABLE guides (
        id INTEGER PRIMARY KEY,
        slug TEXT NOT NULL UNIQUE,
        status TEXT NOT NULL CHECK (status IN ('published', 'retained', 'archived')),
        title TEXT NOT NULL,
        summary TEXT NOT NULL,
        tags TEXT NOT NULL,
        language TEXT NOT NULL,
        published_at TEXT,
        published_ms INTEGER,
        updated_at TEXT,
        author TEXT,
        canonical_url TEXT,
        markdown TEXT NOT NULL,
        word_count INTEGER NOT NULL,
        reading_time_minutes INTEGER NOT NULL,
        headings TEXT NOT NULL,
        content_hash TEXT NOT NULL,
        CHECK (status <> 'published' OR (published_ms IS NOT NULL AND published_at IS NOT NULL))
      );
      -- Serving reads name these partial indexes (INDEXED BY), so they never see unpublished rows,
      -- and an unpublished slug costs the same lookup as an unknown one.
      CREATE UNIQUE INDEX guides_published_by_slug ON guides (slug) WHERE status = 'published';
      CREATE INDEX guides_published_by_date ON guides (published_ms DESC, slug) WHERE status = 'published';
      -- Holds published guides only; rowid = guides.id. Body is plain text (Markdown removed).
      CREATE VIRTUAL TABLE guides_fts USING fts5 (
        title, summary, tags, body,
        tokenize = 'porter unicode61 remove_diacritics 2'
      );
      CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
      INSERT INTO meta (key, value) VALUES ('content_version', '0');
    `,
  },
  {
    version: 2,
    description: 'own search index (impact-scored posting lists built at import) instead of FTS5; plain text kept with the guide',
    sql: `
      ALTER TABLE guides ADD COLUMN plain_text TEXT;
      UPDATE guides SET plain_text = (SELECT f.body FROM guides_fts AS f WHERE f.rowid = guides.id);
      DROP TABLE guides_fts;
      -- Rebuilt as a whole by every import that changes a guide (see docs/search.md).
      CREATE TABLE search_postings (id INTEGER PRIMARY KEY, df INTEGER NOT NULL, data BLOB NOT NULL);
      CREATE TABLE search_docs (docno INTEGER PRIMARY KEY, tokens BLOB NOT NULL);
      CREATE TABLE search_meta (key TEXT PRIMARY KEY, value BLOB NOT NULL) WITHOUT ROWID;
    `,
  },
  {
    version: 3,
    description: 'plain text in parts of 1,024 characters; list pages and search results read no overflow pages',
    sql: `
      -- A snippet reads one or two parts instead of the whole text (which spans overflow pages).
      CREATE TABLE guide_text (
        guide_id INTEGER NOT NULL,
        part INTEGER NOT NULL,
        text TEXT NOT NULL,
        PRIMARY KEY (guide_id, part)
      ) WITHOUT ROWID;
      INSERT INTO guide_text (guide_id, part, text)
        WITH RECURSIVE parts (guide_id, part, rest) AS (
          SELECT id, 0, plain_text FROM guides WHERE plain_text IS NOT NULL AND plain_text <> ''
          UNION ALL
          SELECT guide_id, part + 1, substr(rest, 1025) FROM parts WHERE length(rest) > 1024
        )
        SELECT guide_id, part, substr(rest, 1, 1024) FROM parts;
      UPDATE guides SET plain_text = NULL;
      -- Covering: a list page reads the index alone, never the rows (whose Markdown would make
      -- SQLite walk overflow pages to reach the columns stored after it).
      DROP INDEX guides_published_by_date;
      CREATE INDEX guides_published_by_date ON guides
        (published_ms DESC, slug, title, summary, tags, language, published_at, updated_at, reading_time_minutes)
        WHERE status = 'published';
      -- A search result's summary fields, as JSON, next to its tokens.
      ALTER TABLE search_docs ADD COLUMN card TEXT NOT NULL DEFAULT '[]';
    `,
  },
  {
    version: 4,
    description: 'plain text parts in a rowid table (a WITHOUT ROWID row of 1 KB spills to an overflow page of its own)',
    sql: `
      -- id = guide id × 65,536 + part: one integer key, so parts sit in table pages (up to ~4 KB a
      -- row stays local), and a guide's parts are a rowid range.
      CREATE TABLE guide_text_parts (id INTEGER PRIMARY KEY, text TEXT NOT NULL);
      INSERT INTO guide_text_parts (id, text) SELECT guide_id * 65536 + part, text FROM guide_text;
      DROP TABLE guide_text;
    `,
  },
  {
    version: 5,
    description: 'each search document keeps the first part of its plain text (most snippets come from it)',
    sql: `
      ALTER TABLE search_docs ADD COLUMN head TEXT NOT NULL DEFAULT '';
    `,
  },
  {
    version: 6,
    description:
      "the posting lists of common tokens and prefixes keep a block table (each block's highest frequency), so searches skip blocks",
    sql: `
      -- Written by the index build (search format 7; older indexes are rebuilt): see sqlite-block-table.ts.
      ALTER TABLE search_postings ADD COLUMN blocks BLOB;
    `,
  },
];
