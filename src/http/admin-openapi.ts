import type { FastifyInstance, FastifySchema, HTTPMethods } from 'fastify';
import { type Static, Type } from 'typebox';
import { ADMIN_OPERATIONS, ADMIN_TAGS } from './admin-operations.js';
import { ErrorBody } from './openapi.js';
import {
  applyDocumentedAs,
  completeOperation,
  type Declaration,
  type DeclaredError,
  DOC_EXTENSION,
  headerComponents,
  JSON_BODY_ERRORS,
} from './operation-docs.js';

/**
 * The admin API's own OpenAPI 3.1 document (GET /admin/api/openapi.json), built from the
 * schemas its routes declare. The admin routes are hidden from the public document
 * (/openapi.json, @fastify/swagger), which stays the public API alone; this one is built here
 * from the routes seen by an `onRoute` hook, since @fastify/swagger serves one document per app.
 */

export interface DocumentedRoute {
  method: string;
  /** With Fastify's `:name` parameters and the prefix, e.g. `/admin/api/campaigns/:id`. */
  url: string;
  schema?: FastifySchema;
  /** The route answers without a session (config.noSession). */
  noSession: boolean;
  /** Members answer 403 Administrators only (config.adminOnly). */
  adminOnly: boolean;
}

/**
 * Collects the routes registered from now on in this plugin context and its children (HEAD
 * twins of GET routes left out). Call it before registering them; the list fills as they are.
 */
export function collectRoutes(app: FastifyInstance): DocumentedRoute[] {
  const routes: DocumentedRoute[] = [];
  app.addHook('onRoute', (route) => {
    const methods = ([] as HTTPMethods[]).concat(route.method as HTTPMethods | HTTPMethods[]);
    // The document's own address is no API path (the public document leaves out /openapi.json too).
    if (route.url.endsWith('/openapi.json')) return;
    for (const method of methods) {
      if (method === 'HEAD') continue;
      routes.push({
        method,
        url: route.url,
        schema: route.schema,
        noSession: Boolean((route.config as { noSession?: boolean } | undefined)?.noSession),
        adminOnly: Boolean((route.config as { adminOnly?: boolean } | undefined)?.adminOnly),
      });
    }
  });
  return routes;
}

type Json = Record<string, unknown>;

/**
 * A schema as plain JSON (TypeBox's symbol keys dropped), `$ref`s pointing at components. A
 * subschema with a `title` (the contracts name their shared shapes) becomes a component of
 * that name, referenced wherever it appears, unless two different shapes share the title.
 */
function plain(schema: unknown, components: Record<string, Json>): Json {
  const walk = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(walk);
    if (!node || typeof node !== 'object') return node;
    const object = Object.fromEntries(Object.entries(node as Json).map(([k, v]) => [k, walk(v)]));
    // Herald's own ajv keyword (json-limits.ts) is no JSON Schema keyword: an extension here.
    if ('maxDepth' in object) {
      object['x-max-depth'] = object.maxDepth;
      delete object.maxDepth;
    }
    if (typeof object.$ref === 'string' && !object.$ref.startsWith('#'))
      object.$ref = `#/components/schemas/${object.$ref.replace(/#$/, '')}`;
    const title = object.title;
    if (typeof title === 'string' && /^[A-Za-z0-9._-]+$/.test(title)) {
      const existing = components[title];
      if (!existing) components[title] = object;
      if (!existing || JSON.stringify(existing) === JSON.stringify(object)) return { $ref: `#/components/schemas/${title}` };
    }
    return object;
  };
  return walk(JSON.parse(JSON.stringify(schema ?? {}))) as Json;
}

function withoutId(schema: unknown): Json {
  const { $id: _id, ...rest } = JSON.parse(JSON.stringify(schema)) as Json;
  return rest;
}

/** `/admin/api/campaigns/:id/stats` → `/admin/api/campaigns/{id}/stats`. */
export const openApiPath = (url: string) => url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');

/** `GET /admin/api/campaigns/:id/stats` → `getCampaignsIdStats` (unique per method and path). */
function operationId(method: string, url: string, prefix: string): string {
  const words = url
    .slice(prefix.length)
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean);
  return method.toLowerCase() + words.map((w) => w[0]!.toUpperCase() + w.slice(1)).join('');
}

function parameters(schema: unknown, where: 'path' | 'query', components: Record<string, Json>): Json[] {
  const object = plain(schema, components);
  const properties = (object.properties ?? {}) as Record<string, Json>;
  const required = new Set((object.required ?? []) as string[]);
  return Object.entries(properties).map(([name, property]) => {
    const { description, ...rest } = property;
    return { name, in: where, required: where === 'path' || required.has(name), ...(description ? { description } : {}), schema: rest };
  });
}

/** A response with no body (204) declares `Type.Null()`: the document gives it no content. */
const isEmpty = (schema: Json) => schema.type === 'null';

/**
 * The errors every admin route shares, from how it is registered (docs/admin-api.md): no
 * session, CSRF on writes, members on admin routes, a body or query that fails its schema.
 */
function baseErrors(route: DocumentedRoute): DeclaredError[] {
  const schema = route.schema ?? {};
  const errors: DeclaredError[] = [];
  if (!route.noSession) errors.push('NOT_SIGNED_IN');
  if (!route.noSession && route.method !== 'GET') errors.push('CSRF');
  if (route.adminOnly) errors.push('ADMIN_ONLY');
  if (schema.body) errors.push(...JSON_BODY_ERRORS);
  else if (schema.querystring || schema.params) errors.push('VALIDATION');
  return errors;
}

export function buildAdminDocument(routes: DocumentedRoute[], options: { version: string; prefix: string; publicUrl?: string }): Json {
  const components: Record<string, Json> = { ErrorBody: withoutId(ErrorBody) };
  const paths: Record<string, Record<string, Json>> = {};
  const usedHeaders = new Set<string>();
  for (const route of [...routes].sort((a, b) => a.url.localeCompare(b.url) || a.method.localeCompare(b.method))) {
    const schema = route.schema ?? {};
    const described = schema as { summary?: string; description?: string; [DOC_EXTENSION]?: Declaration };
    const known = ADMIN_OPERATIONS[`${route.method} ${openApiPath(route.url.slice(options.prefix.length))}`];
    const summary = described.summary ?? known?.summary ?? `${route.method} ${openApiPath(route.url)}`;
    const operation: Json = {
      operationId: operationId(route.method, route.url, options.prefix),
      summary,
      description: described.description ?? known?.description ?? summary,
    };
    const tag = route.url
      .slice(options.prefix.length)
      .split('/')[1]
      ?.replace(/\.json$/, '');
    if (tag) operation.tags = [tag];
    const params = [
      ...(schema.params ? parameters(schema.params, 'path', components) : []),
      ...(schema.querystring ? parameters(schema.querystring, 'query', components) : []),
    ];
    if (params.length > 0) operation.parameters = params;
    if (schema.body)
      operation.requestBody = { required: true, content: { 'application/json': { schema: plain(schema.body, components) } } };
    const responses: Record<string, Json> = {};
    let successStatus = 200;
    for (const [status, response] of Object.entries((schema.response ?? {}) as Record<string, unknown>)) {
      const body = plain(response, components);
      if (status.startsWith('2')) successStatus = Number(status);
      responses[status] = {
        description: (body.description as string | undefined) ?? (status.startsWith('2') ? 'Success' : 'Error'),
        ...(isEmpty(body) ? {} : { content: { 'application/json': { schema: body } } }),
      };
    }
    // A file download (a CSV export) declares `produces` and no response schema.
    const produces = (schema as { produces?: string[] }).produces;
    if (produces)
      responses['200'] = {
        description: summary,
        content: Object.fromEntries(produces.map((type) => [type, { schema: { type: 'string' } }])),
      };
    operation.responses = responses;
    // What the route answers: declared with documented(), or its shared errors and the table's.
    operation[DOC_EXTENSION] = described[DOC_EXTENSION] ?? {
      success: { status: successStatus, description: (responses[String(successStatus)]?.description as string | undefined) ?? summary },
      errors: [...baseErrors(route), ...(known?.errors ?? [])],
    };
    completeOperation(operation, usedHeaders);
    // A session everywhere but sign-in; writes also carry the CSRF token.
    if (route.noSession) operation.security = [];
    else if (route.method !== 'GET') operation.security = [{ session: [], csrf: [] }];
    const path = openApiPath(route.url);
    paths[path] ??= {};
    paths[path][route.method.toLowerCase()] = operation;
  }
  const tags = [
    ...new Set(Object.values(paths).flatMap((ops) => Object.values(ops).flatMap((op) => (op.tags as string[] | undefined) ?? []))),
  ].sort();
  return applyDocumentedAs({
    openapi: '3.1.0',
    info: {
      title: 'Herald admin API',
      version: options.version,
      description:
        'The JSON API behind the admin panel (docs/admin-api.md). A session cookie from POST /admin/api/login; ' +
        "every request other than GET/HEAD also carries the session's CSRF token in `x-csrf-token`. Every error answers " +
        '`{statusCode, error, code, message}` (a Validation Error adds `details`), the messages listed per status.',
      contact: { name: 'The operators of this Herald', ...(options.publicUrl ? { url: options.publicUrl } : {}) },
      license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
    },
    servers: [{ url: options.publicUrl ?? '/', description: 'This Herald (PUBLIC_URL)' }],
    tags: tags.map((name) => ({ name, description: ADMIN_TAGS[name] ?? name })),
    paths,
    components: {
      schemas: components,
      headers: headerComponents(usedHeaders),
      securitySchemes: {
        session: { type: 'apiKey', in: 'cookie', name: 'herald_session', description: 'The session cookie set by sign-in.' },
        csrf: { type: 'apiKey', in: 'header', name: 'x-csrf-token', description: "The session's CSRF token, on every write." },
      },
    },
    security: [{ session: [] }],
  }) as Json;
}

/**
 * The admin document of one app: the admin plugin collects its routes into it (collect, in
 * the plugin's context), and both addresses serve the document built once from them.
 */
export class AdminDocumentSource {
  private routes: DocumentedRoute[] = [];
  private prefix = '';
  private built?: Static<typeof AdminDocument>;

  constructor(private readonly options: { version: string; publicUrl: string }) {}

  collect(app: FastifyInstance): void {
    this.prefix = app.prefix;
    this.routes = collectRoutes(app);
  }

  document(): Static<typeof AdminDocument> {
    this.built ??= buildAdminDocument(this.routes, { ...this.options, prefix: this.prefix }) as Static<typeof AdminDocument>;
    return this.built;
  }
}

/** The response schema of the document's own route: its top level (the members are free-form JSON). */
export const AdminDocument = Type.Object({
  openapi: Type.String(),
  info: Type.Unknown(),
  servers: Type.Unknown(),
  tags: Type.Unknown(),
  paths: Type.Unknown(),
  components: Type.Unknown(),
  security: Type.Unknown(),
});
