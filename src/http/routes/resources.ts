import { ResourcesSchema } from '../../schemas/resource.js';
import type { Resources } from '../../schemas/resource.js';
import type { App, RouteContext } from '../app-types.js';
import { NoQuerySchema } from '../../schemas/common.js';
import { resourcesExamples } from '../openapi/examples.js';
import { operationResponses } from '../openapi/responses.js';

/** The links every deployment publishes, before the operator's own from resources.yaml. */
export function builtInLinks(base: string): Resources['links'] {
  return [
    { rel: 'service-desc', href: `${base}/openapi.json`, type: 'application/openapi+json', title: 'OpenAPI definition of this API' },
    { rel: 'service-doc', href: `${base}/docs`, type: 'text/html', title: 'API reference' },
    { rel: 'describedby', href: `${base}/llms.txt`, type: 'text/markdown', title: 'Guide index for language models' },
    // No registered relation names an MCP server: `alternate`, another way to use this API.
    { rel: 'alternate', href: `${base}/mcp`, type: 'application/json', title: 'MCP server (Streamable HTTP)' },
  ];
}

export function registerResourceRoutes(app: App, { config, store, cache }: RouteContext): void {
  app.get(
    '/api/v1/resources',
    {
      schema: {
        operationId: 'listResources',
        summary: 'Official links for agents',
        description:
          "Where this API describes itself (OpenAPI, docs, llms.txt), with IANA link relations, followed by the operator's links.",
        tags: ['resources'],
        querystring: NoQuerySchema,
        response: operationResponses(config.publicBaseUrl, {
          schema: ResourcesSchema,
          description: "Built-in links first, then the operator's links from resources.yaml, in file order.",
          examples: resourcesExamples(config.publicBaseUrl),
        }),
      },
    },
    (request, reply) =>
      cache.serve(
        request,
        reply,
        'resources',
        async () => {
          const payload: Resources = { links: [...builtInLinks(config.publicBaseUrl), ...(await store.getResources())] };
          return { payload };
        },
        { identifiedByUrl: true },
      ),
  );
}
