import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import Fastify from 'fastify';
import { DRAIN_MAX_BYTES, drainUnreadBodies } from '../../src/http/drain.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { makeTenant } from '../helpers/factories.js';

/**
 * decisions.md, Hardening: a body over 1 MiB answers 413 Payload Too Large, and the client
 * gets to read it: the rest of the body is drained (up to 32 MiB, 10 s) before the connection
 * may close, instead of a reset while the client is still writing. Over real TCP: Node's
 * fetch, curl (when installed) and a plain socket that reads only after writing everything.
 */
const run = promisify(execFile);
const MiB = 1024 * 1024;
const TRIES = 5;

let t: TestApp;
let base: string;
let key: string;
let dir: string;
before(async () => {
  t = await startTestApp();
  ({ key } = await makeTenant(t.db, t.config));
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(t.app.server.address() as { port: number }).port}`;
  dir = mkdtempSync(join(tmpdir(), 'herald-body-'));
});
after(async () => {
  await t.close();
  rmSync(dir, { recursive: true, force: true });
});

const oversized = (mib: number) => JSON.stringify({ type: 'visit', leadId: 'ld_x', value: 'a'.repeat(mib * MiB) });
const TOO_LARGE = { statusCode: 413, error: 'Payload Too Large', code: 'PAYLOAD_TOO_LARGE', message: 'Payload Too Large' };

async function curlAvailable(): Promise<boolean> {
  return run('curl', ['--version']).then(
    () => true,
    () => false,
  );
}

for (const mib of [2, 10]) {
  describe(`a ${mib} MiB body`, () => {
    test(`Node's fetch reads the 413 (${TRIES} times)`, async () => {
      const body = oversized(mib);
      for (let i = 0; i < TRIES; i++) {
        const res = await fetch(`${base}/api/events`, {
          method: 'POST',
          body,
          headers: { 'content-type': 'application/json', 'x-service-api-key': key },
        });
        assert.equal(res.status, 413);
        assert.deepEqual(await res.json(), TOO_LARGE);
      }
    });

    test(`curl reads the 413 (${TRIES} times; skipped without curl)`, async (ctx) => {
      if (!(await curlAvailable())) return ctx.skip('curl is not installed');
      const file = join(dir, `body-${mib}.json`);
      writeFileSync(file, oversized(mib));
      for (let i = 0; i < TRIES; i++) {
        const { stdout } = await run('curl', [
          '-sS',
          '-m',
          '30',
          '-X',
          'POST',
          '-H',
          'content-type: application/json',
          '-H',
          `x-service-api-key: ${key}`,
          '--data-binary',
          `@${file}`,
          '-w',
          '\n%{http_code}',
          `${base}/api/events`,
        ]);
        const [json, status] = stdout.split('\n');
        assert.equal(status, '413', stdout);
        assert.deepEqual(JSON.parse(json!), TOO_LARGE);
      }
    });

    test(`a client that reads only after writing the whole body gets the 413, with and without Content-Length (${TRIES} times)`, async () => {
      for (let i = 0; i < TRIES; i++) {
        for (const chunked of [false, true]) {
          const answer = await writeAllThenRead(mib * MiB, chunked);
          assert.match(
            answer,
            /^HTTP\/1\.1 413 Payload Too Large\r\n/,
            `${chunked ? 'chunked' : 'content-length'}: ${answer.slice(0, 200)}`,
          );
          assert.ok(answer.includes(JSON.stringify(TOO_LARGE)), answer);
        }
      }
    });
  });
}

describe('the drain is bounded', () => {
  test(`past ${DRAIN_MAX_BYTES / MiB} MiB the server stops reading and cuts the connection (after the 413 was sent)`, async () => {
    const size = DRAIN_MAX_BYTES + 16 * MiB;
    const { port } = new URL(base);
    const socket = connect(Number(port), '127.0.0.1');
    let answer = '';
    socket.on('data', (d) => (answer += d));
    const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
    socket.on('error', () => undefined);
    await new Promise((resolve) => socket.on('connect', resolve));
    const write = (data: string | Buffer) => new Promise<boolean>((done) => socket.write(data, (err) => done(!err)));
    await write(
      `POST /api/events HTTP/1.1\r\nhost: localhost\r\ncontent-type: application/json\r\nx-service-api-key: ${key}\r\ncontent-length: ${size}\r\n\r\n`,
    );
    const piece = Buffer.alloc(MiB, 'a');
    let sent = 0;
    while (sent < size && (await write(piece))) sent += piece.length;
    await closed;
    assert.ok(sent < size, `the server stopped taking the body (${sent / MiB} MiB of ${size / MiB} taken)`);
    assert.match(answer, /^HTTP\/1\.1 413 Payload Too Large\r\n/);
  });

  test('a client that stops sending mid-body is cut when the drain time is over', { timeout: 10_000 }, async () => {
    const app = Fastify({ bodyLimit: 10 });
    drainUnreadBodies(app, { maxBytes: DRAIN_MAX_BYTES, maxMs: 200 });
    app.post('/', async () => ({ ok: true }));
    await app.listen({ port: 0, host: '127.0.0.1' });
    try {
      const socket = connect((app.server.address() as { port: number }).port, '127.0.0.1');
      let answer = '';
      socket.on('data', (d) => (answer += d));
      socket.on('error', () => undefined);
      const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
      socket.write('POST / HTTP/1.1\r\nhost: localhost\r\ncontent-type: application/json\r\ncontent-length: 1000\r\n\r\n{"a":');
      // Nothing more is sent: only the drain's time bound can end this connection.
      await closed;
      assert.match(answer, /^HTTP\/1\.1 413 /);
    } finally {
      await app.close();
    }
  });
});

/**
 * Sends a POST of `size` bytes in 64 KiB writes, each waiting for the last, and only then
 * reads: a reset while it writes fails the write, and a reset before it reads drops the answer.
 */
function writeAllThenRead(size: number, chunked: boolean): Promise<string> {
  const { port } = new URL(base);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1');
    let answer = '';
    socket.pause();
    socket.on('data', (d) => (answer += d));
    socket.on('error', reject);
    socket.on('end', () => resolve(answer));
    socket.on('connect', async () => {
      const framing = chunked ? 'transfer-encoding: chunked' : `content-length: ${size}`;
      const write = (data: string | Buffer) => new Promise<void>((done, fail) => socket.write(data, (err) => (err ? fail(err) : done())));
      try {
        await write(
          `POST /api/events HTTP/1.1\r\nhost: localhost\r\ncontent-type: application/json\r\nx-service-api-key: ${key}\r\n${framing}\r\nconnection: close\r\n\r\n`,
        );
        const piece = Buffer.alloc(64 * 1024, 'a');
        for (let sent = 0; sent < size; sent += piece.length)
          await write(chunked ? Buffer.concat([Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from('\r\n')]) : piece);
        if (chunked) await write('0\r\n\r\n');
        socket.resume();
      } catch (err) {
        reject(err);
      }
    });
  });
}
