import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { ERROR_CODES, type ErrorCode, publicCode } from '../../src/errors.js';
import { registeredRoutes } from '../fuzz/routes.js';
import { apiClient, startTestApp, type TestApp } from '../helpers/app.js';
import { makeTenant } from '../helpers/factories.js';

/** OpenAPI 3.1 at /openapi.json and readable docs at /docs, both without a key. */

let t: TestApp;
before(async () => {
  t = await startTestApp({ PUBLIC_URL: 'https://herald.example.net/' });
});
after(async () => {
  await t.close();
});

async function getJson(url: string): Promise<any> {
  const res = await t.app.inject({ method: 'GET', url });
  assert.equal(res.statusCode, 200, res.body);
  assert.match(String(res.headers['content-type']), /^application\/json/);
  return res.json();
}

/** GET, following redirects within the app (at most 5). */
async function getFollowing(url: string) {
  let current = url;
  for (let hops = 0; hops < 5; hops++) {
    const res = await t.app.inject({ method: 'GET', url: current });
    if (res.statusCode < 300 || res.statusCode >= 400) return { res, url: current };
    current = new URL(String(res.headers.location), `http://localhost${current}`).pathname;
  }
  throw new Error(`too many redirects from ${url}`);
}

/** Every `$ref` found anywhere in `node`. */
function refsIn(node: unknown, found: string[] = []): string[] {
  if (Array.isArray(node)) node.forEach((item) => refsIn(item, found));
  else if (node && typeof node === 'object') {
    for (const [k, v] of Object.entries(node)) {
      if (k === '$ref' && typeof v === 'string') found.push(v);
      else refsIn(v, found);
    }
  }
  return found;
}

test('/openapi.json is an OpenAPI 3.1 document, served without a key', async () => {
  const doc = await getJson('/openapi.json');
  assert.match(doc.openapi, /^3\.1\.\d+$/);
  assert.equal(typeof doc.info?.title, 'string');
  assert.equal(typeof doc.info?.version, 'string');
});

test('it describes POST /api/events with its request body schema', async () => {
  const doc = await getJson('/openapi.json');
  const operation = doc.paths?.['/api/events']?.post;
  assert.ok(operation, `paths: ${Object.keys(doc.paths ?? {}).join(', ')}`);
  assert.equal(doc.paths['/api/events'].get, undefined, 'only the methods that exist are listed');
  const schema = operation.requestBody?.content?.['application/json']?.schema;
  assert.ok(schema, 'a JSON request body is declared');
  assert.equal(schema.type, 'object');
  assert.deepEqual(schema.required, ['type']);
  for (const member of ['type', 'leadId', 'tracker', 'value', 'metadata', 'url'])
    assert.ok(schema.properties?.[member], `body member ${member}`);
  assert.equal(schema.properties.type.type, 'string');
  assert.equal(schema.additionalProperties, false, 'unknown members are refused, and the document says so');
  assert.ok(operation.responses?.['200'], 'the success response is described');
  for (const status of ['400', '401', '403', '404']) assert.ok(operation.responses[status], `error response ${status} is described`);
});

test('it declares the x-service-api-key header scheme and requires a key', async () => {
  const doc = await getJson('/openapi.json');
  assert.deepEqual(Object.keys(doc.components?.securitySchemes ?? {}), ['apiKeyHeader'], 'the header is the one scheme');
  assert.equal(doc.components.securitySchemes.apiKeyHeader.in, 'header');
  assert.equal(doc.components.securitySchemes.apiKeyHeader.name, 'x-service-api-key');
  assert.deepEqual(doc.security, [{ apiKeyHeader: [] }]);
  const operation = doc.paths['/api/events'].post;
  const security: Record<string, unknown>[] = operation.security ?? doc.security ?? [];
  assert.ok(
    security.some((requirement) => 'apiKeyHeader' in requirement),
    JSON.stringify(security),
  );
});

test('every $ref in the document resolves to a component', async () => {
  const doc = await getJson('/openapi.json');
  const refs = refsIn(doc.paths);
  assert.ok(refs.length > 0, 'error responses share one schema by reference');
  for (const ref of new Set(refs)) {
    const match = /^#\/components\/(schemas|headers)\/(.+)$/.exec(ref);
    assert.ok(match && doc.components[match[1]!]?.[match[2]!], `unresolved ${ref}`);
  }
});

test('the documentation routes themselves are not listed as API paths', async () => {
  const doc = await getJson('/openapi.json');
  for (const path of Object.keys(doc.paths)) assert.doesNotMatch(path, /^\/(docs|openapi\.json)/, path);
});

test('GET /docs answers a 200 HTML page whose assets load', async () => {
  const { res, url } = await getFollowing('/docs');
  assert.equal(res.statusCode, 200);
  assert.match(String(res.headers['content-type']), /^text\/html/);
  assert.match(res.body, /<html/i);
  const script = /<script[^>]+src="([^"]+)"/i.exec(res.body)?.[1];
  assert.ok(script, 'the page loads a script');
  const asset = await t.app.inject({ method: 'GET', url: new URL(script, `http://localhost${url}`).pathname });
  assert.equal(asset.statusCode, 200, `${script} loads`);
});

/** Every (path, method, operation) of a document. */
function operations(doc: any): [string, string, any][] {
  return Object.entries(doc.paths as Record<string, Record<string, any>>).flatMap(([path, ops]) =>
    Object.entries(ops).map(([method, op]) => [path, method, op] as [string, string, any]),
  );
}

/** The codes ERROR_CODES gives a status, by public name. */
const codesOfStatus = (status: number) =>
  new Map(
    (Object.keys(ERROR_CODES) as ErrorCode[]).filter((c) => ERROR_CODES[c][0] === status).map((c) => [publicCode(c), ERROR_CODES[c][1]]),
  );

test('servers is PUBLIC_URL; api-key is a query parameter of the two GET forms (trigger, cancel) only', async () => {
  const doc = await getJson('/openapi.json');
  assert.deepEqual(
    doc.servers.map((s: { url: string }) => s.url),
    ['https://herald.example.net'],
  );
  for (const [path, method, op] of operations(doc)) {
    const names = (op.parameters ?? []).map((p: { name: string; in: string }) => `${p.in}:${p.name}`);
    // The two GET forms of the spec; the reads (GET /api/leads...) take the key from the header only.
    if (method === 'get' && path.startsWith('/api/campaigns/'))
      assert.ok(names.includes('query:api-key'), `${method} ${path} takes api-key in its query`);
    else assert.ok(!names.includes('query:api-key'), `${method} ${path} does not document api-key`);
  }
});

test('every public operation is complete: id, description, examples, and per status its exact messages', async () => {
  const doc = await getJson('/openapi.json');
  const routes = registeredRoutes(t.app).filter((r) => r.url.startsWith('/api/'));
  assert.ok(routes.length >= 6, `the public routes: ${routes.length}`);
  const ids = new Set<string>();
  for (const route of routes) {
    const name = `${route.method} ${route.url}`;
    const op = doc.paths[route.url.replace(/:([A-Za-z0-9_]+)/g, '{$1}')]?.[route.method.toLowerCase()];
    assert.ok(op, `${name} is documented`);
    assert.match(op.operationId ?? '', /^[a-z][A-Za-z]+$/, `${name} has a readable operationId`);
    assert.ok(!ids.has(op.operationId), `${name}: operationId ${op.operationId} is unique`);
    ids.add(op.operationId);
    assert.ok(op.summary && op.description, `${name} has a summary and a description`);
    assert.ok(
      op.tags?.length > 0 && op.tags.every((tag: string) => doc.tags.some((t: any) => t.name === tag && t.description)),
      `${name}: described tags`,
    );
    const statuses = Object.keys(op.responses);
    assert.ok(statuses.includes('500'), `${name} lists 500`);
    for (const [status, response] of Object.entries(op.responses) as [string, any][]) {
      const where = `${name} ${status}`;
      assert.ok(response.description && response.description !== 'Default Response', `${where} is described`);
      assert.ok(response.headers?.['x-request-id'], `${where} carries x-request-id`);
      assert.ok(response.headers?.['RateLimit-Remaining'], `${where} carries the RateLimit fields (a keyed route)`);
      const examples = Object.values(response.content?.['application/json']?.examples ?? {}) as { value: any }[];
      assert.ok(examples.length > 0, `${where} has examples`);
      if (status.startsWith('2')) continue;
      const known = codesOfStatus(Number(status));
      for (const { value } of examples) {
        assert.equal(value.statusCode, Number(status), `${where}: example status`);
        assert.ok(known.has(value.code), `${where}: ${value.code} is a code of ${status}`);
        assert.equal(value.message, known.get(value.code), `${where}: ${value.code} shows the table's message`);
        assert.ok(response.description.includes(`\`${value.message}\``), `${where} lists the message ${value.message}`);
        if (value.code === 'VALIDATION_ERROR') assert.ok(value.details?.length > 0, `${where}: a Validation Error example has details`);
      }
      if (status === '429') assert.ok(response.headers['Retry-After'], `${where} carries Retry-After`);
    }
  }
  const upsert = doc.paths['/api/leads'].post.responses['200'].content['application/json'].examples;
  assert.ok(
    Object.values(upsert).some((e: any) => e.value.warnings.length > 0),
    'a contact write example shows warnings',
  );
});

test('the documented error example is the body the API answers', async () => {
  const doc = await getJson('/openapi.json');
  const { key } = await makeTenant(t.db, t.config);
  const res = await apiClient(t.app, key).post('/api/events', { type: 'visit', leadId: 'ld_missing' });
  const examples = doc.paths['/api/events'].post.responses['404'].content['application/json'].examples;
  assert.deepEqual(res.body, examples.LEAD_NOT_FOUND.value);
  for (const header of ['x-request-id', 'ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset'])
    assert.ok(res.headers[header], header);
});

test('schemas are precise: KPI values a number or a decimal string, field values by format', async () => {
  const doc = await getJson('/openapi.json');
  const body = doc.paths['/api/leads'].post.requestBody.content['application/json'].schema;
  const kpi = body.properties.kpis.additionalProperties;
  assert.deepEqual(
    kpi.anyOf.map((s: { type: string }) => s.type),
    ['number', 'string'],
  );
  assert.ok(new RegExp(kpi.anyOf[1].pattern).test('-12.5') && !new RegExp(kpi.anyOf[1].pattern).test('1e3'));
  const value = body.properties.fields.items.properties.value;
  assert.deepEqual(
    value.anyOf.map((s: { title: string }) => s.title),
    ['String', 'Date', 'Number', 'Decimal string', 'Boolean', 'Array', 'Clear'],
  );
  assert.ok(!JSON.stringify(doc).includes('"maxDepth"'), 'no keyword outside JSON Schema');
});

test('the admin API has its own document at /admin/openapi.json (the old address too), complete as well', async () => {
  const doc = await getJson('/admin/openapi.json');
  assert.deepEqual(doc, await getJson('/admin/api/openapi.json'));
  assert.equal(doc.info.title, 'Herald admin API');
  for (const [path, method, op] of operations(doc)) {
    const name = `${method} ${path}`;
    assert.ok(op.operationId && op.description, `${name}: operationId and description`);
    assert.ok(op.responses['500'], `${name} lists 500`);
    for (const [status, response] of Object.entries(op.responses) as [string, any][]) {
      if (status.startsWith('2')) continue;
      const examples = Object.values(response.content['application/json'].examples) as { value: any }[];
      assert.ok(examples.length > 0, `${name} ${status} has examples`);
      for (const { value } of examples) assert.ok(codesOfStatus(Number(status)).has(value.code), `${name} ${status}: ${value.code}`);
    }
  }
  assert.ok(doc.paths['/admin/api/users'].post.responses['403'].description.includes('`Administrators only`'));
});

test('public codes are unique, and the table in docs/decisions.md is ERROR_CODES', () => {
  const all = (Object.keys(ERROR_CODES) as ErrorCode[]).map((c) => [publicCode(c), ERROR_CODES[c][0], ERROR_CODES[c][1]] as const);
  assert.equal(new Set(all.map(([code]) => code)).size, all.length, 'no two codes share a public name');
  for (const [code] of all) assert.match(code, /^[A-Z][A-Z0-9_]+$/);
  const text = readFileSync(new URL('../../docs/decisions.md', import.meta.url), 'utf8');
  const documented = [...text.matchAll(/^\| `([A-Z0-9_]+)` \| (\d{3}) \| (.+) \|$/gm)].map((m) => [m[1], Number(m[2]), m[3]] as const);
  assert.deepEqual(documented, all);
});
