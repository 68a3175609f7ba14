import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { newId } from '../../src/ids.js';
import { registeredRoutes } from '../fuzz/routes.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { assertError, signedIn } from './helpers.js';

/**
 * The admin API's contract, walked from the app's route table: every /admin/api route is in
 * the admin OpenAPI document (built from the route schemas), and each route declares
 * its path parameters, its body and a 2xx response schema.
 */

/** Writes that take no body (the document may leave out their request body). */
const BODILESS = new Set<string>(['POST /admin/api/logout', 'POST /admin/api/campaigns/:id/duplicate']);

let t: TestApp;
before(async () => {
  t = await startTestApp();
});
after(async () => {
  await t.close();
});

async function adminDocument(): Promise<any> {
  const res = await t.app.inject({ method: 'GET', url: '/admin/api/openapi.json' });
  assert.equal(res.statusCode, 200, res.body);
  assert.match(String(res.headers['content-type']), /^application\/json/);
  return res.json();
}

/** The admin routes, but the document's own address (no API path, as /openapi.json in the public one). */
const adminRoutes = () => registeredRoutes(t.app).filter((r) => r.url.startsWith('/admin/api/') && r.url !== '/admin/api/openapi.json');
const pathOf = (url: string) => url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');

/** `#/components/schemas/X` → the component; anything else as it is. */
function resolve(doc: any, schema: any): any {
  const ref = schema?.$ref;
  if (typeof ref !== 'string') return schema;
  const found = ref.startsWith('#/components/schemas/') ? doc.components?.schemas?.[ref.slice('#/components/schemas/'.length)] : undefined;
  assert.ok(found, `${ref} resolves to a component`);
  return found;
}

describe('the admin OpenAPI document', () => {
  test('is OpenAPI 3.1, served without a session, and lists every admin route of the route table', async () => {
    const doc = await adminDocument();
    assert.match(doc.openapi, /^3\.1\.\d+$/);
    assert.equal(doc.info.title, 'Herald admin API');
    const routes = adminRoutes();
    assert.ok(routes.length > 20, `the route table has the admin routes: ${routes.length}`);
    for (const { method, url } of routes) {
      assert.ok(doc.paths?.[pathOf(url)]?.[method.toLowerCase()], `${method} ${url} is in the admin document`);
    }
    const listed = Object.values(doc.paths).reduce((n: number, ops: any) => n + Object.keys(ops).length, 0);
    assert.equal(listed, routes.length, 'and nothing else');
  });

  test('every admin route declares its path parameters, its body and a 2xx response schema', async () => {
    const doc = await adminDocument();
    const checked = adminRoutes();
    assert.ok(checked.length >= 39, `every admin route: ${checked.map((r) => `${r.method} ${r.url}`).join(', ')}`);
    for (const { method, url } of checked) {
      const name = `${method} ${url}`;
      const operation = doc.paths[pathOf(url)][method.toLowerCase()];
      const declared = new Set((operation.parameters ?? []).filter((p: any) => p.in === 'path').map((p: any) => p.name));
      for (const [, param] of url.matchAll(/:([A-Za-z0-9_]+)/g)) assert.ok(declared.has(param), `${name} declares its :${param} parameter`);
      if (['POST', 'PUT', 'PATCH'].includes(method) && !BODILESS.has(name)) {
        const body = resolve(doc, operation.requestBody?.content?.['application/json']?.schema);
        assert.equal(body?.type, 'object', `${name} declares its body`);
      }
      const success = Object.entries(operation.responses ?? {}).filter(([status]) => /^2\d\d$/.test(status));
      assert.ok(success.length > 0, `${name} declares a 2xx response`);
      for (const [status, response] of success as [string, any][]) {
        if (status === '204') continue;
        assert.ok(resolve(doc, response.content?.['application/json']?.schema), `${name} ${status} has a response schema`);
      }
    }
  });

  test('choices are real enumerations; the public document stays the public API', async () => {
    const doc = await adminDocument();
    const body = resolve(doc, doc.paths['/admin/api/campaigns'].post.requestBody.content['application/json'].schema);
    assert.deepEqual(body.properties.channel.enum, ['email', 'whatsapp']);
    assert.deepEqual(body.properties.schedule.enum, ['api', 'manual']);
    assert.deepEqual(body.properties.mode.enum, ['immediate', 'delay']);
    assert.deepEqual(body.required, ['name', 'channel']);
    const pub = await t.app.inject({ method: 'GET', url: '/openapi.json' });
    const paths = Object.keys(pub.json().paths);
    assert.ok(paths.length > 0);
    assert.deepEqual(
      paths.filter((p) => p.startsWith('/admin')),
      [],
      'no admin route in the public document',
    );
  });
});

describe("a wrong choice answers the campaign settings' message", () => {
  test("channel, schedule and mode, on create, update and in a preview's edits", async () => {
    const { panel } = await signedIn(t);
    const detail = (body: any, path: string) => body.details.find((d: { path: string }) => d.path === path)?.message;
    let res = assertError(await panel.post('/campaigns', { name: 'x', channel: 'sms' }), 400, 'Validation Error', '/channel');
    assert.equal(detail(res, '/channel'), 'channel must be email or whatsapp');
    res = assertError(
      await panel.post('/campaigns', { name: 'x', channel: 'email', schedule: 'cron', mode: 'later' }),
      400,
      'Validation Error',
    );
    assert.deepEqual(res.details, [
      { path: '/schedule', message: 'schedule must be api or manual' },
      { path: '/mode', message: 'mode must be immediate or delay' },
    ]);
    const { id } = (await panel.post('/campaigns', { name: 'Draft', channel: 'email' })).body;
    res = assertError(await panel.patch(`/campaigns/${id}`, { channel: 7 }), 400, 'Validation Error', '/channel');
    assert.equal(detail(res, '/channel'), 'channel must be email or whatsapp');
    res = assertError(
      await panel.post(`/campaigns/${id}/preview`, { contactId: newId('ld'), campaign: { mode: 'soon' } }),
      400,
      'Validation Error',
      '/campaign/mode',
    );
    assert.equal(detail(res, '/campaign/mode'), 'mode must be immediate or delay');
  });

  test("a custom field's type: the enumeration of the contract, with the message the CLI gives", async () => {
    const { panel } = await signedIn(t);
    const res = assertError(await panel.post('/fields', { name: 'Colour', type: 'color' }), 400, 'Validation Error', '/type');
    assert.deepEqual(res.details, [
      { path: '/type', message: 'type must be one of string, number, date, boolean, location, phone, array' },
    ]);
    const doc = await adminDocument();
    const body = resolve(doc, doc.paths['/admin/api/fields'].post.requestBody.content['application/json'].schema);
    assert.deepEqual(body.properties.type.enum, ['string', 'number', 'date', 'boolean', 'location', 'phone', 'array']);
    assert.equal((await panel.get('/fields')).body.items.length, 0, 'nothing was created');
  });
});
