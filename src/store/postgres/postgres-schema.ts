/**
 * Versioned PostgreSQL migrations. `migrate()` applies the missing ones in one transaction that
 * first takes MIGRATION_LOCK (a transaction-scoped advisory lock), so any number of instances may
 * start at once: the first migrates, the others wait, then find nothing left to do.
 */
export interface PostgresMigration {
  version: number;
  description: string;
  sql: string;
}

/** Advisory lock keys (two-int form): one class for this application, one object per purpose. */
export const LOCK_CLASS = 0x67756964; // 'guid'
export const MIGRATION_LOCK = 1;
export const IMPORT_LOCK = 2;

/** The text search configuration every tsvector and tsquery of this schema uses. */
export const SEARCH_CONFIG = 'guides_search';

/**
 * Characters that separate words, replaced by spaces before PostgreSQL's parser sees the text.
 * The parser alone would read `example.com` as one host token, `3.5` as one number and keep
 * `cross-contamination` as an extra compound token that shifts phrase positions; SQLite's
 * unicode61 tokenizer (and parseSearchQuery) split on all of them. The class is written as code
 * point ranges, so it does not depend on the database's locale: ASCII punctuation and symbols,
 * Latin-1 punctuation, × and ÷, general punctuation, arrows to dingbats, CJK punctuation, emoji.
 */
const SEPARATORS = String.raw`[\u0001-\u002F\u003A-\u0040\u005B-\u0060\u007B-\u007F\u00A0-\u00A9\u00AB-\u00B1\u00B4\u00B6-\u00B8\u00BB\u00BF\u00D7\u00F7\u2000-\u206F\u2190-\u2BFF\u3000-\u303F\U0001F000-\U0001FAFF]+`;

/** A lexeme no query can produce, one position long, placed between the fields of search_vector. */
const FIELD_GAP = `'#:1'::tsvector`;

export const POSTGRES_MIGRATIONS: readonly PostgresMigration[] = [
  {
    version: 1,
    description: 'guides, published-only access paths, weighted full-text vector, metadata',
    sql: `
      CREATE EXTENSION IF NOT EXISTS unaccent;

      -- Porter stemming (the same algorithm as SQLite's porter tokenizer, so "menus" finds "menu";
      -- snowball's "english" keeps "menus") and no stop-word list, like FTS5: a query for "the"
      -- or "how to" matches text, and a stop-word-only query never turns into an empty tsquery.
      CREATE TEXT SEARCH DICTIONARY guides_porter (TEMPLATE = snowball, Language = porter);
      CREATE TEXT SEARCH CONFIGURATION ${SEARCH_CONFIG} (COPY = simple);
      ALTER TEXT SEARCH CONFIGURATION ${SEARCH_CONFIG}
        ALTER MAPPING FOR asciiword, asciihword, hword_asciipart WITH guides_porter;
      -- unaccent first, so "Café" and "cafe" meet as "cafe" before stemming.
      ALTER TEXT SEARCH CONFIGURATION ${SEARCH_CONFIG}
        ALTER MAPPING FOR word, hword, hword_part, numword, numhword, hword_numpart WITH unaccent, guides_porter;

      CREATE FUNCTION guides_search_text(value text) RETURNS text
        LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
        AS $fn$ SELECT regexp_replace(value, '${SEPARATORS}', ' ', 'g') $fn$;

      -- jsonb_array_elements_text is immutable (array_to_string is not), so this may feed a generated column.
      CREATE FUNCTION guides_tags_text(tags jsonb) RETURNS text
        LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
        AS $fn$ SELECT coalesce(string_agg(tag, ' '), '') FROM jsonb_array_elements_text(tags) AS tag $fn$;

      -- AND (and OR, for snippets) the per-term tsqueries of one search: the functions behind && and ||.
      CREATE AGGREGATE guides_tsquery_and(tsquery) (SFUNC = tsquery_and, STYPE = tsquery);
      CREATE AGGREGATE guides_tsquery_or(tsquery) (SFUNC = tsquery_or, STYPE = tsquery);

      CREATE TABLE guides (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        -- "C" collation: slugs compare and sort in byte order everywhere ('a-b' before 'a0'),
        -- whatever the database's default collation is.
        slug text COLLATE "C" NOT NULL,
        status text NOT NULL CHECK (status IN ('published', 'retained', 'archived')),
        title text NOT NULL,
        summary text NOT NULL,
        tags jsonb NOT NULL,
        language text NOT NULL,
        published_at text,
        published_ms bigint,
        updated_at text,
        author jsonb,
        canonical_url text,
        markdown text NOT NULL,
        plain_text text NOT NULL,
        word_count integer NOT NULL,
        reading_time_minutes integer NOT NULL,
        headings jsonb NOT NULL,
        content_hash text NOT NULL,
        -- Between fields sits the lexeme '#': it takes one position, so a phrase never runs from the
        -- end of one field into the next (as in SQLite), and no query can match it ('#' is never in a word).
        search_vector tsvector GENERATED ALWAYS AS (
          setweight(to_tsvector('${SEARCH_CONFIG}', guides_search_text(title)), 'A') || ${FIELD_GAP}
          || setweight(to_tsvector('${SEARCH_CONFIG}', guides_search_text(summary)), 'B') || ${FIELD_GAP}
          || setweight(to_tsvector('${SEARCH_CONFIG}', guides_search_text(guides_tags_text(tags))), 'C') || ${FIELD_GAP}
          || setweight(to_tsvector('${SEARCH_CONFIG}', guides_search_text(plain_text)), 'D')
        ) STORED,
        -- The title alone, small: "does the title match the whole query" is the first ranking
        -- tier, and testing it on this costs far less than ts_filter over the full vector.
        title_vector tsvector GENERATED ALWAYS AS (to_tsvector('${SEARCH_CONFIG}', guides_search_text(title))) STORED,
        CONSTRAINT guides_slug_key UNIQUE (slug),
        CHECK (status <> 'published' OR (published_ms IS NOT NULL AND published_at IS NOT NULL))
      );
      -- Serving reads filter on status = 'published' and so go through these partial indexes, which
      -- hold published guides only: an unpublished slug costs the same lookup as an unknown one.
      CREATE UNIQUE INDEX guides_published_by_slug ON guides (slug) WHERE status = 'published';
      CREATE INDEX guides_published_by_date ON guides (published_ms DESC, slug) WHERE status = 'published';
      CREATE INDEX guides_published_search ON guides USING gin (search_vector) WHERE status = 'published';

      CREATE TABLE meta (key text PRIMARY KEY, value text NOT NULL);
      INSERT INTO meta (key, value) VALUES ('content_version', '0');
    `,
  },
];
