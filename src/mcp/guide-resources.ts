/**
 * MCP resources: every published guide as its Markdown document at the https URL REST serves it
 * from, `{base}/api/v1/guides/{slug}.md` (so a client that only fetches URLs can read it too),
 * listed page by page and offered as a resource template.
 */
import { ProtocolError, ProtocolErrorCode, ResourceNotFoundError, ResourceTemplate } from '@modelcontextprotocol/server';
import type { ListResourcesRequest, ListResourcesResult, McpServer, ReadResourceResult, Variables } from '@modelcontextprotocol/server';
import type { ListPosition } from '../guides/cursor.js';
import type { RouteContext } from '../http/app-types.js';
import { guideUrl } from '../representation/guide-list-body.js';
import { renderGuideMarkdown } from '../http/guide-markdown.js';
import { getGuide } from './guide-pages.js';

const RESOURCES_PER_PAGE = 100;
/** The one message for every URI that names no published guide. */
export const RESOURCE_NOT_FOUND_MESSAGE = 'No published guide at this URI. List the guides with resources/list.';

export function markdownUri(urlBase: string, slug: string): string {
  return `${urlBase}/api/v1/guides/${slug}.md`;
}

const GUIDE_METADATA = {
  title: 'Guide (Markdown)',
  description: 'A published guide as Markdown: YAML front matter with its metadata, then the body as authored.',
  mimeType: 'text/markdown',
};

/** The template, its reader and the paged list, made once for the handler's lifetime (see guideToolRegistrar). */
export function guideResourceRegistrar(context: RouteContext): (server: McpServer) => void {
  const base = context.config.publicBaseUrl;
  const template = new ResourceTemplate(markdownUri(base, '{slug}'), { list: undefined });

  const read = async (uri: URL, variables: Variables): Promise<ReadResourceResult> => {
    const slug = variables.slug;
    const guide = typeof slug === 'string' ? await getGuide(context, slug) : undefined;
    if (!guide) throw new ResourceNotFoundError(uri.href, RESOURCE_NOT_FOUND_MESSAGE);
    return { contents: [{ uri: uri.href, mimeType: 'text/markdown', text: renderGuideMarkdown(guide, guideUrl(base, guide.slug)) }] };
  };

  // McpServer lists a template's resources in one page; this lists them newest first, page by page,
  // with the REST list's signed cursors.
  const list = async (request: ListResourcesRequest): Promise<ListResourcesResult> => {
    const codec = await context.cursorCodec();
    const cursor = request.params?.cursor;
    let after: ListPosition | undefined;
    if (cursor !== undefined) {
      const position = codec.decode(cursor);
      if (position?.kind !== 'list')
        throw new ProtocolError(ProtocolErrorCode.InvalidParams, 'Invalid cursor: pass nextCursor back unchanged.');
      after = position.after;
    }
    const page = await context.store.listPublishedGuides({ limit: RESOURCES_PER_PAGE, ...(after ? { after } : {}) });
    return {
      resources: page.items.map((guide) => ({
        uri: markdownUri(base, guide.slug),
        name: guide.slug,
        title: guide.title,
        description: guide.summary,
        mimeType: 'text/markdown',
        annotations: { audience: ['user', 'assistant'], lastModified: guide.updatedAt },
      })),
      ...(page.next ? { nextCursor: codec.encode({ kind: 'list', after: page.next }) } : {}),
    };
  };

  return (server) => {
    server.registerResource('guide', template, GUIDE_METADATA, read);
    server.server.setRequestHandler('resources/list', list);
  };
}
