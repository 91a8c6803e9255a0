/**
 * Discovery for agents and people: /llms.txt (a Markdown index), /llms-full.txt (every guide as
 * Markdown), /.well-known/api-catalog (RFC 9727) and the problem type pages that every problem's
 * `type` URL points at. All but /llms-full.txt are rendered once per content version through the
 * representation cache (ETag, 304, HEAD); /llms-full.txt is streamed (see registerLlmsFullTxt).
 */
import { createHash } from 'node:crypto';
import { Type } from '../../schemas/typebox.js';
import { registerLlmsFullTxt } from './llms-full.js';
import type { ProductInfo, ResourceLink } from '../../guides/guide.js';
import type { GuideIndexEntry } from '../../store/guide-store.js';
import type { App, RouteContext } from '../app-types.js';
import { AppError, NotFoundError, PROBLEM_TYPES } from '../problems.js';
import type { ProblemName } from '../problems.js';
import { builtInLinks } from './resources.js';

export const LLMS_TXT_TYPE = 'text/markdown; charset=utf-8';
/**
 * RFC 9727 §4: a linkset (RFC 9264) with the api-catalog profile. The charset is stated, as on
 * every JSON response here, so the header does not depend on how the body reaches Fastify.
 */
export const API_CATALOG_TYPE = 'application/linkset+json; profile="https://www.rfc-editor.org/info/rfc9727"; charset=utf-8';
export const API_CATALOG_PATH = '/.well-known/api-catalog';

/** Link targets in a linkset (RFC 9264 §4.2.4): href plus the target attributes we know. */
interface LinkTarget {
  href: string;
  type?: string;
  title?: string;
}

export interface ApiCatalog {
  linkset: Array<{ anchor: string } & Record<string, string | LinkTarget[]>>;
}

/** One line of Markdown link text: no line breaks, and brackets that cannot close the link early. */
function linkText(text: string): string {
  return text
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/([\\[\]])/g, '\\$1');
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/** /llms.txt per llmstxt.org: title, summary quote, what the API does, links, then every published guide. */
export function renderLlmsTxt(
  base: string,
  product: ProductInfo,
  guides: readonly GuideIndexEntry[],
  resources: readonly ResourceLink[],
): string {
  const lines = [
    `# ${oneLine(product.name)}`,
    '',
    `> ${oneLine(product.description)}`,
    '',
    'A public, read-only JSON API over these guides; no key or account is needed.',
    `Search and list them with \`GET ${base}/api/v1/guides?q=…\` (follow \`nextCursor\` for more), and read one, Markdown body included, with \`GET ${base}/api/v1/guides/{slug}\` (as Markdown: \`{slug}.md\` or \`Accept: text/markdown\`).`,
    'Responses are cacheable (ETag, Cache-Control), rate-limited per client IP, and errors are RFC 9457 problem+json with a page per problem type.',
    '',
    '## API',
    '',
    `- [OpenAPI definition](${base}/openapi.json): every operation, parameter, response and example (OpenAPI 3.1)`,
    `- [API reference](${base}/docs): interactive documentation; try requests in the browser`,
    `- [API catalog](${base}${API_CATALOG_PATH}): RFC 9727 linkset of this API's description, documentation and policies`,
    `- [Product](${base}/api/v1/product): identity, capabilities and limits of this API`,
    `- [Resources](${base}/api/v1/resources): official links, with IANA link relations`,
    `- [MCP server](${base}/mcp): Model Context Protocol over Streamable HTTP (POST), anonymous; tools to search, list and read the guides`,
    `- [All guides as Markdown](${base}/llms-full.txt): every published guide below in one file, newest first`,
    '',
    '## Guides',
    '',
    ...guides.map((guide) => `- [${linkText(guide.title)}](${base}/api/v1/guides/${guide.slug}.md): ${oneLine(guide.summary)}`),
  ];
  if (resources.length > 0) {
    lines.push('', '## Optional', '', ...resources.map((link) => `- [${linkText(link.title)}](${link.href}): ${link.rel}`));
  }
  return `${lines.join('\n')}\n`;
}

/**
 * The RFC 9727 catalog: one linkset context, this API, with exactly the links of
 * GET /api/v1/resources grouped by relation, so the two can never disagree.
 */
export function buildApiCatalog(base: string, links: readonly ResourceLink[]): ApiCatalog {
  const context: { anchor: string } & Record<string, string | LinkTarget[]> = { anchor: `${base}/api/v1` };
  for (const link of links) {
    const targets = (context[link.rel] ??= []) as LinkTarget[];
    targets.push({ href: link.href, ...(link.type ? { type: link.type } : {}), title: link.title });
  }
  return { linkset: [context] };
}

/** The best media type for a problem page: JSON only when the client prefers it to HTML. */
export function prefersJson(accept: string | undefined): boolean {
  if (!accept) return false;
  let html = 0;
  let json = 0;
  for (const part of accept.split(',')) {
    const [range = '', ...params] = part.trim().toLowerCase().split(';');
    const qParam = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const q = qParam ? Number(qParam.slice(2)) : 1;
    if (!Number.isFinite(q)) continue;
    const type = range.trim();
    if (type === 'text/html') html = Math.max(html, q);
    else if (type === 'application/json' || type === 'application/problem+json') json = Math.max(json, q);
    else if (type === 'text/*' || type === '*/*') html = Math.max(html, q * 0.999);
    else if (type === 'application/*') json = Math.max(json, q * 0.999);
  }
  return json > html;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string);
}

/** Escapes, then turns `code` spans of the about/advice texts into <code>. */
function inlineHtml(text: string): string {
  return escapeHtml(text).replace(/`([^`]+)`/g, '<code>$1</code>');
}

const PAGE_STYLE =
  'body{font:16px/1.5 system-ui,sans-serif;max-width:40rem;margin:3rem auto;padding:0 1rem;color:#1f2328}' +
  'code{background:#f3f4f6;padding:0 .25em;border-radius:3px}dt{font-weight:600;margin-top:1rem}';
const PAGE_STYLE_HASH = `'sha256-${createHash('sha256').update(PAGE_STYLE).digest('base64')}'`;
/** Problem pages run no script and load nothing; the one inline stylesheet is allowed by its hash. */
export const PROBLEM_PAGE_CSP = `default-src 'none'; style-src ${PAGE_STYLE_HASH}; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`;

function renderProblemPage(base: string, name: ProblemName): string {
  const problem = PROBLEM_TYPES[name];
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(problem.title)} (${problem.status}) – problem type</title>
<style>${PAGE_STYLE}</style>
</head>
<body>
<main>
<h1>${escapeHtml(problem.title)}</h1>
<p>HTTP status <strong>${problem.status}</strong>, problem type <code>${escapeHtml(`${base}/problems/${name}`)}</code> (RFC 9457).</p>
<dl>
<dt>What happened</dt>
<dd>${inlineHtml(problem.about)}</dd>
<dt>What to do</dt>
<dd>${inlineHtml(problem.advice)}</dd>
</dl>
<p>The response body is <code>application/problem+json</code> with <code>type</code>, <code>title</code>, <code>status</code> and <code>detail</code>${name === 'invalid-parameter' ? ', and <code>errors</code> naming each parameter at fault' : ''}. Quote the response's <code>X-Request-Id</code> when you report a problem.</p>
<p><a href="${escapeHtml(`${base}/docs`)}">API reference</a> · <a href="${escapeHtml(`${base}/openapi.json`)}">OpenAPI definition</a></p>
</main>
</body>
</html>
`;
}

function isProblemName(name: string): name is ProblemName {
  return Object.hasOwn(PROBLEM_TYPES, name);
}

export function registerDiscoveryRoutes(app: App, { config, store, cache }: RouteContext): void {
  const base = config.publicBaseUrl;

  app.get('/llms.txt', { schema: { hide: true } }, (request, reply) =>
    cache.serve(
      request,
      reply,
      'llms.txt',
      async () => {
        const [product, guides, resources] = await Promise.all([store.getProduct(), store.listPublishedIndex(), store.getResources()]);
        if (!product) throw new AppError('service-unavailable', 'No content has been imported yet.', { headers: { 'retry-after': '30' } });
        return { payload: renderLlmsTxt(base, product, guides, resources), contentType: LLMS_TXT_TYPE };
      },
      { identifiedByUrl: true },
    ),
  );

  registerLlmsFullTxt(app, { config, store, cache });

  app.get(API_CATALOG_PATH, { schema: { hide: true } }, (request, reply) =>
    cache.serve(
      request,
      reply,
      'api-catalog',
      async () => {
        const links = [...builtInLinks(base), ...(await store.getResources())];
        return {
          payload: buildApiCatalog(base, links),
          contentType: API_CATALOG_TYPE,
          // RFC 9727 §2: GET and HEAD name the catalog with the api-catalog relation.
          link: `<${base}${API_CATALOG_PATH}>; rel="api-catalog"`,
        };
      },
      { identifiedByUrl: true },
    ),
  );

  app.get(
    '/problems/:name',
    {
      schema: { hide: true, params: Type.Object({ name: Type.String({ pattern: '^[a-z]+(?:-[a-z]+)*$', maxLength: 64 }) }) },
    },
    (request, reply) => {
      const { name } = request.params as { name: string };
      if (!isProblemName(name)) throw new NotFoundError();
      const json = prefersJson(request.headers.accept);
      if (!json) reply.header('content-security-policy', PROBLEM_PAGE_CSP);
      return cache.serve(request, reply, `problem/${name}/${json ? 'json' : 'html'}`, async () => {
        if (json) {
          const problem = PROBLEM_TYPES[name];
          return {
            payload: JSON.stringify({
              type: `${base}/problems/${name}`,
              name,
              title: problem.title,
              status: problem.status,
              description: problem.about,
              advice: problem.advice,
            }),
            contentType: 'application/json; charset=utf-8',
          };
        }
        return { payload: renderProblemPage(base, name), contentType: 'text/html; charset=utf-8' };
      });
    },
  );
}
