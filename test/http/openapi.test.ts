import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/app.js';

/** OpenAPI 3.1 at /openapi.json and readable docs at /docs, both without a key. */

let t: TestApp;
before(async () => {
  t = await startTestApp();
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
  assert.deepEqual(doc.components?.securitySchemes?.apiKeyHeader, { type: 'apiKey', in: 'header', name: 'x-service-api-key' });
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
    const match = /^#\/components\/schemas\/(.+)$/.exec(ref);
    assert.ok(match && doc.components.schemas?.[match[1]!], `unresolved ${ref}`);
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
