import { AppError } from '../problems.js';
import { RootSchema, rootLinks } from '../../schemas/agents.js';
import type { Root } from '../../schemas/agents.js';
import { rootExamples } from '../openapi/examples.js';
import type { App, RouteContext } from '../app-types.js';
import { NoQuerySchema } from '../../schemas/common.js';
import { operationResponses } from '../openapi/responses.js';

/** `GET /`: what someone who types the bare origin finds, the service and where to go next. */
export function registerRootRoute(app: App, { config, store, cache }: RouteContext): void {
  const base = config.publicBaseUrl;
  app.get(
    '/',
    {
      schema: {
        operationId: 'getRoot',
        summary: 'Index of this service',
        description:
          "The service's name and description, the API version, and links to the product, the guides, the official resources, " +
          'the OpenAPI document, the API reference, the MCP server and the llms.txt indexes.',
        tags: ['product'],
        querystring: NoQuerySchema,
        response: operationResponses(base, {
          schema: RootSchema,
          description: 'The index, with absolute links built from PUBLIC_BASE_URL.',
          examples: rootExamples(base),
        }),
      },
    },
    (request, reply) =>
      cache.serve(
        request,
        reply,
        'root',
        async () => {
          const product = await store.getProduct();
          if (!product)
            throw new AppError('service-unavailable', 'No content has been imported yet.', { headers: { 'retry-after': '30' } });
          const payload: Root = { name: product.name, description: product.description, apiVersion: 'v1', links: rootLinks(base) };
          return { payload };
        },
        { identifiedByUrl: true },
      ),
  );
}
