/**
 * Page and query limits of the public API: the schemas, the product document, the OpenAPI
 * examples, the routes and the MCP tools all read them here, so they cannot disagree. Also the
 * size of a guide file an import accepts by default (the configuration and the content reader).
 */

/** Page size when a request names no `limit`. */
export const DEFAULT_LIMIT = 20;
/** The largest `limit` a request may ask for. */
export const MAX_LIMIT = 50;
/** The longest `q`, counted after trimming. */
export const MAX_QUERY_LENGTH = 200;
/** search_guides answers fewer results by default: an assistant reads each one. */
export const MCP_SEARCH_DEFAULT_LIMIT = 10;
/** MAX_GUIDE_BYTES when unset: far above any real guide, far below what would strain an import. */
export const DEFAULT_MAX_GUIDE_BYTES = 1024 * 1024;
