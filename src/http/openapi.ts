import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { applyDocumentedAs, completeOperation, headerComponents } from './operation-docs.js';

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

/**
 * The `Idempotency-Key` request header of the public API's POSTs (README, decisions.md), for the
 * documentation only: every string passes this schema and `http/idempotency.ts` checks the key
 * itself, so a bad key answers the usual Validation Error naming the header.
 */
export const IdempotencyHeaders = Type.Object({
  'idempotency-key': Type.Optional(
    Type.String({
      description:
        'Optional, 1 to 255 visible ASCII characters, unique per request (a UUID). A retry with the same key and body within ' +
        '24 hours answers the first answer again, with `Idempotent-Replayed: true`, and does nothing else; the same key with ' +
        'another body answers 422, and 409 while the first request is still running. Only successful answers are kept.',
    }),
  ),
});

/** The tags of the public document, in the order a reader meets them. */
const TAGS = [
  { name: 'contacts', description: 'Create and update contacts (leads): identifiers, tags, custom fields, KPIs, metadata, notes.' },
  { name: 'events', description: "Log events in a contact's history (visits, purchases, clicks...), used by segments and campaigns." },
  { name: 'campaigns', description: 'Trigger an API-triggered campaign for one contact, or cancel its pending delayed send.' },
];

type Json = Record<string, unknown>;

/**
 * The document @fastify/swagger generates, completed from each route's declaration
 * (operation-docs.ts): responses with messages, examples and headers; precise schemas.
 */
export function completeDocument(document: Json): Json {
  const usedHeaders = new Set<string>();
  for (const operations of Object.values((document.paths ?? {}) as Record<string, Record<string, Json>>))
    for (const operation of Object.values(operations)) completeOperation(operation, usedHeaders);
  const completed = applyDocumentedAs(document) as Json;
  const components = (completed.components ?? {}) as Json;
  if (usedHeaders.size > 0) components.headers = headerComponents(usedHeaders);
  completed.components = components;
  return completed;
}

/** OpenAPI 3.1 at /openapi.json and readable docs at /docs, both generated from the route schemas. */
export async function registerOpenApi(app: FastifyInstance, options: { version: string; publicUrl: string }): Promise<void> {
  app.addSchema(ErrorBody);
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Herald API',
        version: options.version,
        description:
          'Contacts, events and API-triggered campaigns. Every call carries an API key in the `x-service-api-key` header ' +
          '(`Authorization: Bearer <key>` is accepted too; the two GET forms also take it as the `api-key` query parameter, for ' +
          'tools that can only call an address). The key is a server-side secret.\n\n' +
          'Every error answers `{statusCode, error, code, message}`: `code` is a stable machine code, `message` the exact text ' +
          'listed per status below; a Validation Error adds `details`, a 500 adds `requestId`. Every answer to a request whose ' +
          'key is known carries `RateLimit-Limit`, `RateLimit-Remaining` and `RateLimit-Reset`; a 429 adds `Retry-After`.',
        contact: { name: 'The operators of this Herald', url: options.publicUrl },
        license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
      },
      servers: [{ url: options.publicUrl, description: 'This Herald (PUBLIC_URL)' }],
      tags: TAGS,
      components: {
        securitySchemes: {
          apiKeyHeader: { type: 'apiKey', in: 'header', name: 'x-service-api-key', description: 'The API key of the account.' },
        },
      },
      security: [{ apiKeyHeader: [] }],
    },
    transformObject: (input) => completeDocument(('openapiObject' in input ? input.openapiObject : input.swaggerObject) as Json),
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => String(json.$id ?? `def-${i}`) },
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
}
