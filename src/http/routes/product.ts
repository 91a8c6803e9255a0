import { AppError } from '../problems.js';
import { ProductSchema } from '../schemas/product.js';
import type { Product } from '../schemas/product.js';
import { SOFTWARE_VERSION } from '../../version.js';
import { DEFAULT_LIMIT, MAX_LIMIT, MAX_QUERY_LENGTH } from '../../guides/limits.js';
import type { App, RouteContext } from '../app-types.js';
import { NoQuerySchema } from '../schemas/common.js';
import { productExamples } from '../schemas/examples.js';
import { operationResponses } from '../schemas/responses.js';

export function registerProductRoutes(app: App, { config, store, cache }: RouteContext): void {
  const base = config.publicBaseUrl;
  app.get(
    '/api/v1/product',
    {
      schema: {
        operationId: 'getProduct',
        summary: 'Product identity and capabilities',
        description:
          'Name, description and homepage of the service, the API and software versions, what the API can do, and where to go next.',
        tags: ['product'],
        querystring: NoQuerySchema,
        response: operationResponses(base, {
          schema: ProductSchema,
          description: 'The product, its capabilities and links.',
          examples: productExamples(base),
        }),
      },
    },
    (request, reply) =>
      cache.serve(
        request,
        reply,
        'product',
        async () => {
          const product = await store.getProduct();
          if (!product)
            throw new AppError('service-unavailable', 'No content has been imported yet.', { headers: { 'retry-after': '30' } });
          const payload: Product = {
            name: product.name,
            description: product.description,
            ...(product.homepage ? { homepage: product.homepage } : {}),
            apiVersion: 'v1',
            softwareVersion: SOFTWARE_VERSION,
            capabilities: {
              readOnly: true,
              search: { parameter: 'q', maxLength: MAX_QUERY_LENGTH },
              pagination: {
                style: 'cursor',
                cursorParameter: 'cursor',
                limitParameter: 'limit',
                defaultLimit: DEFAULT_LIMIT,
                maxLimit: MAX_LIMIT,
              },
              formats: ['application/json', 'text/markdown'],
            },
            links: {
              guides: `${base}/api/v1/guides`,
              resources: `${base}/api/v1/resources`,
              openapi: `${base}/openapi.json`,
              docs: `${base}/docs`,
              mcp: `${base}/mcp`,
            },
          };
          return { payload };
        },
        { identifiedByUrl: true },
      ),
  );
}
