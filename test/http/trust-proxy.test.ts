import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { ConfigError } from '../../src/config.js';
import { randomIp } from '../admin/helpers.js';
import { startTestApp, type TestApp, testConfig } from '../helpers/app.js';
import { randomEmail } from '../helpers/factories.js';

/** README configuration, decisions.md Hardening: TRUST_PROXY names the proxies whose X-Forwarded-For is believed. */

const PROXY_RANGE = '10.0.0.0/8'; // randomIp() gives 10.x.y.z
// Distinct on every call: two tests drawing the same address would share its throttle (a 1-in-250 flake).
let lastOutside = 0;
const outside = () => `192.0.2.${++lastOutside}`;

function failedSignIn(app: FastifyInstance, socketAddress: string, forwardedFor: string) {
  return app.inject({
    method: 'POST',
    url: '/admin/api/login',
    remoteAddress: socketAddress,
    headers: { 'x-forwarded-for': forwardedFor },
    payload: { email: randomEmail(), password: 'wrong password' },
  });
}

async function useUpAddress(app: FastifyInstance, socketAddress: string, forwardedFor: string) {
  for (let i = 0; i < 5; i++) assert.equal((await failedSignIn(app, socketAddress, forwardedFor)).statusCode, 401);
}

describe('without TRUST_PROXY', () => {
  let t: TestApp;
  before(async () => (t = await startTestApp()));
  after(() => t.close());

  test('X-Forwarded-For is ignored: the socket address is throttled, whatever the header says', async () => {
    const proxy = randomIp();
    await useUpAddress(t.app, proxy, outside());
    assert.equal((await failedSignIn(t.app, proxy, outside())).statusCode, 429);
  });
});

describe('with TRUST_PROXY', () => {
  let t: TestApp;
  before(async () => (t = await startTestApp({ TRUST_PROXY: PROXY_RANGE })));
  after(() => t.close());

  test('behind a listed proxy each client is throttled by its own forwarded address', async () => {
    const proxy = randomIp();
    const client = outside();
    await useUpAddress(t.app, proxy, client);
    assert.equal((await failedSignIn(t.app, proxy, client)).statusCode, 429, 'the guessing client is refused');
    assert.equal((await failedSignIn(t.app, proxy, outside())).statusCode, 401, 'another client behind the same proxy is not');
  });

  test('a client that is not a listed proxy cannot pick its address with the header', async () => {
    const client = outside();
    await useUpAddress(t.app, client, randomIp());
    assert.equal((await failedSignIn(t.app, client, outside())).statusCode, 429);
  });
});

test('TRUST_PROXY takes addresses, CIDR ranges and the named ranges; anything else stops start-up', () => {
  assert.deepEqual(testConfig({ TRUST_PROXY: '10.0.0.1, 172.16.0.0/12,loopback,::1' }).trustProxy, [
    '10.0.0.1',
    '172.16.0.0/12',
    'loopback',
    '::1',
  ]);
  assert.equal(testConfig({}).trustProxy, undefined);
  for (const bad of ['true', '*', '10.0.0.0/33', 'proxy.internal']) {
    assert.throws(
      () => testConfig({ TRUST_PROXY: bad }),
      (err: unknown) => err instanceof ConfigError && /TRUST_PROXY/.test(err.message),
      bad,
    );
  }
});
