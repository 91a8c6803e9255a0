/**
 * The three MCP tools: search_guides, list_guides, get_guide. Their input and output schemas are
 * the REST API's TypeBox schemas (the outputs exactly GuideList and GuideDetail), handed to the SDK
 * as plain JSON Schema through fromJsonSchema. Every result carries structuredContent and the same
 * JSON as text (for clients that read only text); errors are isError results without
 * structuredContent, which strict clients would check against the output schema.
 */
import { fromJsonSchema } from '@modelcontextprotocol/server';
import type { CallToolResult, McpServer, ToolAnnotations } from '@modelcontextprotocol/server';
import type { FastifyBaseLogger } from 'fastify';
import type { TSchema } from 'typebox';
import type { RouteContext } from '../http/app-types.js';
import { GuideDetailSchema, GuideListQuerySchema, GuideListSchema, GuideSummarySchema } from '../schemas/guide.js';
import { Type } from '../schemas/typebox.js';
import { DEFAULT_LIMIT, MAX_LIMIT, MAX_QUERY_LENGTH, MCP_SEARCH_DEFAULT_LIMIT } from '../guides/limits.js';
import { StoreUnavailableError } from '../store/guide-store.js';
import { getGuide, listGuides, MAX_SCANNED_PER_CALL, searchGuides } from './guide-pages.js';
import type { PageResult } from './guide-pages.js';

/** The one message for every slug that names no published guide: retained, archived, unknown or malformed. */
export const GUIDE_NOT_FOUND_MESSAGE = 'No published guide has this slug. Use search_guides or list_guides to find one.';
const INVALID_CURSOR_MESSAGE = 'The cursor is not one this server issued, or it was changed. Pass nextCursor back unchanged.';
const OTHER_SEARCH_MESSAGE =
  'This cursor continues a different walk: send the same query (or, for list_guides, a list cursor) as the first page.';
const UNAVAILABLE_MESSAGE = 'The service cannot reach its database right now. Retry shortly.';

const ANNOTATIONS: ToolAnnotations = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };

const { cursor: CursorSchema, limit: LimitSchema } = GuideListQuerySchema.properties;
const { language: LanguageSchema } = GuideSummarySchema.properties;

const SearchInputSchema = Type.Object(
  {
    query: Type.String({
      ...GuideListQuerySchema.properties.q,
      minLength: 1,
      description: `What to look for (1–${MAX_QUERY_LENGTH} characters). Every term must match; the last also as a prefix; "double quotes" make a phrase.`,
    }),
    limit: Type.Optional(
      Type.Integer({ ...LimitSchema, default: MCP_SEARCH_DEFAULT_LIMIT, description: `Results per page, 1–${MAX_LIMIT}.` }),
    ),
    cursor: CursorSchema,
  },
  { additionalProperties: false },
);

const ListInputSchema = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ ...LimitSchema, default: DEFAULT_LIMIT, description: `Guides per page, 1–${MAX_LIMIT}.` })),
    cursor: CursorSchema,
    tag: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'Only guides carrying this tag (case-insensitive).' })),
    language: Type.Optional(
      Type.String({
        ...LanguageSchema,
        minLength: 1,
        maxLength: 35,
        description: 'Only guides in this BCP 47 language (case-insensitive).',
      }),
    ),
  },
  { additionalProperties: false },
);

// Any string is accepted and checked by the handler, so a malformed slug gets the same answer as an unknown one.
const GetInputSchema = Type.Object(
  {
    slug: Type.String({
      description: "The guide's slug, as in its url: lowercase words joined by hyphens.",
      examples: ['reduce-food-waste'],
      maxLength: 1000,
    }),
  },
  { additionalProperties: false },
);

/** Shared schemas that REST schemas reference by `$id`; a tool's schema must stand on its own. */
const SHARED: Readonly<Record<string, TSchema>> = { 'GuideSummary#': GuideSummarySchema };

/**
 * TypeBox schemas are JSON Schema with symbol-keyed extras, and REST's refer to shared ones by
 * `$id`: the SDK gets plain, self-contained JSON, references inlined and ids dropped.
 */
function selfContained(schema: TSchema): Record<string, unknown> {
  return JSON.parse(
    JSON.stringify(schema, (key, value: unknown) => {
      if (key === '$id') return undefined;
      const ref = (value as { $ref?: unknown } | null)?.$ref;
      return typeof ref === 'string' && ref in SHARED ? SHARED[ref] : value;
    }),
  ) as Record<string, unknown>;
}
const standard = <T>(schema: TSchema) => fromJsonSchema<T>(selfContained(schema));

type SearchArgs = { query: string; limit?: number; cursor?: string };
type ListArgs = { limit?: number; cursor?: string; tag?: string; language?: string };
type GetArgs = { slug: string };

// Compiled once: a server instance is built per request and reuses them.
const schemas = {
  searchInput: standard<SearchArgs>(SearchInputSchema),
  listInput: standard<ListArgs>(ListInputSchema),
  getInput: standard<GetArgs>(GetInputSchema),
  list: standard<Record<string, unknown>>(GuideListSchema),
  detail: standard<Record<string, unknown>>(GuideDetailSchema),
};

function errorResult(text: string): CallToolResult {
  return { content: [{ type: 'text', text }], isError: true };
}

function jsonResult(json: string): CallToolResult {
  return { content: [{ type: 'text', text: json }], structuredContent: JSON.parse(json) as Record<string, unknown> };
}

function pageResult(page: PageResult): CallToolResult {
  if (!page.ok) return errorResult(page.reason === 'invalid-cursor' ? INVALID_CURSOR_MESSAGE : OTHER_SEARCH_MESSAGE);
  return jsonResult(page.body.toString('utf8'));
}

/** A store outage is a tool error the model can read, never the exception's own text. */
async function guarded(log: FastifyBaseLogger, run: () => Promise<CallToolResult>): Promise<CallToolResult> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof StoreUnavailableError) {
      log.error({ err: error }, 'database unavailable');
      return errorResult(UNAVAILABLE_MESSAGE);
    }
    log.error({ err: error }, 'MCP tool failed');
    return errorResult('The tool failed unexpectedly. The failure was logged.');
  }
}

const SEARCH_CONFIG = {
  title: 'Search guides',
  description:
    'Full-text search of the published restaurant guides, best match first: the same results, order and cursors as ' +
    "GET /api/v1/guides?q=. Each item has the guide's summary fields and a snippet with matched terms in **. " +
    'Pass nextCursor back (with the same query) for the next page. Read a guide with get_guide.',
  inputSchema: schemas.searchInput,
  outputSchema: schemas.list,
  annotations: { title: 'Search guides', ...ANNOTATIONS },
};

const LIST_CONFIG = {
  title: 'List guides',
  description:
    'The published guides, newest first, as GET /api/v1/guides. Optional tag and language filters: a filtered ' +
    `call reads at most ${MAX_SCANNED_PER_CALL} guides, so its page may be short and still have a nextCursor.`,
  inputSchema: schemas.listInput,
  outputSchema: schemas.list,
  annotations: { title: 'List guides', ...ANNOTATIONS },
};

const GET_CONFIG = {
  title: 'Get a guide',
  description: 'One published guide by slug: its metadata, Markdown body, word count and headings, as GET /api/v1/guides/{slug}.',
  inputSchema: schemas.getInput,
  outputSchema: schemas.detail,
  annotations: { title: 'Get a guide', ...ANNOTATIONS },
};

/**
 * The three tools' handlers, made once for the handler's lifetime: a server is built per request,
 * and only the registration itself has to happen on each one.
 */
export function guideToolRegistrar(context: RouteContext, log: FastifyBaseLogger): (server: McpServer) => void {
  const search = ({ query, limit = MCP_SEARCH_DEFAULT_LIMIT, cursor }: SearchArgs) =>
    guarded(log, async () => pageResult(await searchGuides(context, { query, limit, ...(cursor === undefined ? {} : { cursor }) })));
  const list = ({ limit = DEFAULT_LIMIT, cursor, tag, language }: ListArgs) =>
    guarded(log, async () =>
      pageResult(
        await listGuides(context, {
          limit,
          ...(cursor === undefined ? {} : { cursor }),
          ...(tag === undefined ? {} : { tag }),
          ...(language === undefined ? {} : { language }),
        }),
      ),
    );
  const get = ({ slug }: GetArgs) =>
    guarded(log, async () => {
      const guide = await getGuide(context, slug);
      return guide ? jsonResult(JSON.stringify(guide)) : errorResult(GUIDE_NOT_FOUND_MESSAGE);
    });
  return (server) => {
    server.registerTool('search_guides', SEARCH_CONFIG, search);
    server.registerTool('list_guides', LIST_CONFIG, list);
    server.registerTool('get_guide', GET_CONFIG, get);
  };
}
