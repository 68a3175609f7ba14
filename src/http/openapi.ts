import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';

/** The error body every failing call answers with (decisions.md, Error responses). */
export const ErrorBody = Type.Object(
  {
    statusCode: Type.Integer(),
    error: Type.String(),
    code: Type.String({ description: 'Stable machine code (docs/decisions.md, Error codes).' }),
    message: Type.String(),
    details: Type.Optional(Type.Array(Type.Object({ path: Type.String(), message: Type.String() }))),
    requestId: Type.Optional(Type.String()),
  },
  { $id: 'ErrorBody', description: 'Every error: statusCode, HTTP reason, the exact message, and details for Validation Error.' },
);

/** Warnings of a 200 response: items that were skipped without failing the call. */
export const Problems = Type.Array(Type.Object({ path: Type.String(), message: Type.String() }));

/** Standard error responses for a key-protected route, referenced from each route schema. */
export const errorResponses = (...statuses: number[]) => Object.fromEntries(statuses.map((s) => [s, Type.Ref('ErrorBody')]));

/** OpenAPI 3.1 at /openapi.json and readable docs at /docs, both generated from the route schemas. */
export async function registerOpenApi(app: FastifyInstance, version: string): Promise<void> {
  app.addSchema(ErrorBody);
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Herald API',
        version,
        description:
          'Contacts, events and API-triggered campaigns. Every call carries an API key in the `x-service-api-key` header ' +
          '(or `Authorization: Bearer`, or the `api-key` query parameter). The key is a server-side secret.',
      },
      components: {
        securitySchemes: {
          apiKeyHeader: { type: 'apiKey', in: 'header', name: 'x-service-api-key' },
          bearer: { type: 'http', scheme: 'bearer' },
          apiKeyQuery: { type: 'apiKey', in: 'query', name: 'api-key' },
        },
      },
      security: [{ apiKeyHeader: [] }, { bearer: [] }, { apiKeyQuery: [] }],
    },
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => String(json.$id ?? `def-${i}`) },
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
}
