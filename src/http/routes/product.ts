import { AppError } from '../problems.js';
import { productBody, ProductSchema } from '../../schemas/product.js';
import type { App, RouteContext } from '../app-types.js';
import { NoQuerySchema } from '../../schemas/common.js';
import { productExamples } from '../openapi/examples.js';
import { operationResponses } from '../openapi/responses.js';

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
          const payload = productBody(product, base);
          return { payload };
        },
        { identifiedByUrl: true },
      ),
  );
}
