import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/app.js';

/**
 * Requests that Node's HTTP parser refuses never reach a route; they still answer in the error
 * shape of decisions.md with an x-request-id (found by the fuzz suite: Fastify's own body before).
 */

let t: TestApp;
let port: number;

before(async () => {
  t = await startTestApp();
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  port = (t.app.server.address() as { port: number }).port;
});
after(async () => {
  await t.close();
});

/** Writes raw bytes and reads everything the server answers until it closes the connection. */
function rawExchange(bytes: string): Promise<{ status: number; headers: Record<string, string>; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.end(bytes));
    let text = '';
    socket.on('data', (d) => (text += d));
    socket.on('error', reject);
    socket.on('close', () => {
      const [head = '', body = ''] = text.split('\r\n\r\n');
      const [statusLine = '', ...lines] = head.split('\r\n');
      const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body });
    });
  });
}

test('a malformed request answers 400 in the JSON error shape with an x-request-id', async () => {
  const res = await rawExchange('NOT-A-METHOD /api/leads HTTP/1.1\r\nHost: x\r\n\r\n');
  assert.equal(res.status, 400);
  assert.match(res.headers['content-type']!, /^application\/json/);
  assert.match(res.headers['x-request-id']!, /^[0-9a-f-]{36}$/);
  assert.deepEqual(JSON.parse(res.body), {
    statusCode: 400,
    error: 'Bad Request',
    code: 'MALFORMED_REQUEST',
    message: 'Malformed HTTP request',
  });
});

test('headers over the size limit answer 431 in the JSON error shape', async () => {
  const res = await rawExchange(`GET /api/leads?${'x'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`);
  assert.equal(res.status, 431);
  assert.ok(res.headers['x-request-id']);
  assert.deepEqual(JSON.parse(res.body), {
    statusCode: 431,
    error: 'Request Header Fields Too Large',
    code: 'HEADERS_TOO_LARGE',
    message: 'Request Header Fields Too Large',
  });
});

test('the 431 answer to a HEAD carries no body', async () => {
  const res = await rawExchange(`HEAD /api/leads?${'x'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`);
  assert.equal(res.status, 431);
  assert.ok(res.headers['x-request-id']);
  assert.equal(res.body, '');
});
