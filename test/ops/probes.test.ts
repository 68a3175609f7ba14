import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { sql } from 'kysely';
import pg from 'pg';
import { ConfigError, loadConfig } from '../../src/config.js';
import { MIGRATION_NAMES } from '../../src/db/migrate.js';
import { TcpProxy } from '../fakes/tcp-proxy.js';
import { makeTenant } from '../helpers/factories.js';
import { eventually, startTestHerald, type TestHerald } from '../helpers/herald.js';

const postgresUrl = process.env.DATABASE_URL || undefined;
const engine = postgresUrl ? 'postgres' : 'sqlite';
const started: TestHerald[] = [];
after(async () => {
  for (const t of started) await t.close().catch(() => undefined);
});

async function start(env: Record<string, string> = {}, options: Parameters<typeof startTestHerald>[1] = {}) {
  const t = await startTestHerald(env, options);
  started.push(t);
  return t;
}

const get = async (app: TestHerald['app'], url: string, headers: Record<string, string> = {}) => {
  const res = await app.inject({ method: 'GET', url, headers });
  return { status: res.statusCode, body: res.json(), headers: res.headers };
};

describe('GET /healthz and GET /readyz', () => {
  test('answer 200 with a small JSON body, with no API key, and write no info log line per probe', async () => {
    const t = await start();
    assert.deepEqual(await get(t.app, '/healthz').then((r) => [r.status, r.body]), [200, { status: 'ok' }]);
    const ready = await get(t.app, '/readyz');
    assert.deepEqual([ready.status, ready.body], [200, { status: 'ok', checks: { database: 'ok', dispatcher: 'ok' } }]);
    assert.equal(ready.headers['cache-control'], 'no-store');
    assert.ok(!t.logs.some((line) => /\/(healthz|readyz)/.test(line)), 'probes are not logged at info level');
    // Other requests still are: the silence is the probes' own.
    await t.app.inject({ method: 'GET', url: '/api/leads' });
    assert.ok(t.logs.some((line) => line.includes('/api/leads')));
  });

  test('an API process has no dispatcher to report', async () => {
    const t = await start({}, { role: 'api' });
    assert.deepEqual((await get(t.app, '/readyz')).body, { status: 'ok', checks: { database: 'ok' } });
  });

  test('a database that lacks a migration of this build is not ready (503), and is again once it has it', async () => {
    const t = await start({}, { role: 'api' });
    const latest = MIGRATION_NAMES.at(-1)!;
    const row = await sql<{ name: string; timestamp: string }>`select name, timestamp from kysely_migration where name = ${latest}`.execute(
      t.db.kysely,
    );
    await sql`delete from kysely_migration where name = ${latest}`.execute(t.db.kysely);
    try {
      const res = await get(t.app, '/readyz');
      assert.deepEqual([res.status, res.body], [503, { status: 'unavailable', checks: { database: 'not migrated' } }]);
      assert.equal((await get(t.app, '/healthz')).status, 200, 'alive all the same');
    } finally {
      await sql`insert into kysely_migration (name, timestamp) values (${latest}, ${row.rows[0]!.timestamp})`.execute(t.db.kysely);
    }
    assert.equal((await get(t.app, '/readyz')).status, 200);
  });

  test('a database that cannot be reached is not ready (503), and is again when it comes back', {
    skip: engine !== 'postgres' && 'PostgreSQL: the network is cut by a relay',
  }, async () => {
    const target = new URL(postgresUrl!);
    const proxy = await TcpProxy.start(target.hostname, Number(target.port || 5432));
    try {
      const viaProxy = new URL(postgresUrl!);
      viaProxy.host = proxy.address;
      const t = await start({ DATABASE_URL: viaProxy.href });
      assert.equal((await get(t.app, '/readyz')).status, 200);
      await proxy.cut();
      const res = await get(t.app, '/readyz');
      assert.equal(res.status, 503);
      assert.equal(res.body.checks.database, 'unreachable');
      assert.equal((await get(t.app, '/healthz')).status, 200);
      await proxy.restore();
      await eventually(async () => (await get(t.app, '/readyz')).status === 200, 5000, 'ready again');
    } finally {
      await proxy.cut();
    }
  });

  test('a dispatcher loop stuck on a database step makes its process not ready (503), and ready again once it moves', async () => {
    const t = await start({}, { stalledAfterMs: 300 });
    const { accountId } = await makeTenant(t.db, t.config);
    assert.ok(accountId);
    let release: () => Promise<void>;
    if (engine === 'postgres') {
      // A long exclusive lock on the queue (a schema change, VACUUM FULL): the claim waits on it.
      const client = new pg.Client({ connectionString: postgresUrl });
      await client.connect();
      await client.query('begin');
      await client.query('lock table sends in access exclusive mode');
      release = async () => {
        await client.query('rollback');
        await client.end();
      };
    } else {
      // A transaction that does not end holds SQLite's one connection: the claim waits for it.
      let end!: () => void;
      const ended = new Promise<void>((resolve) => (end = resolve));
      const holding = t.db.kysely.transaction().execute(async () => ended);
      release = async () => {
        end();
        await holding;
      };
    }
    try {
      t.herald.dispatcher!.notify();
      const res = await eventually(
        async () => {
          const r = await get(t.app, '/readyz');
          return r.body.checks.dispatcher === 'stalled' && r;
        },
        6000,
        'the dispatcher reported stalled',
      );
      assert.equal(res.status, 503);
      if (engine === 'postgres') assert.equal(res.body.checks.database, 'ok', 'the database itself answers');
    } finally {
      await release();
    }
    await eventually(async () => (await get(t.app, '/readyz')).status === 200, 6000, 'ready again');
  });
});

describe('where /metrics is served, and its token', () => {
  const token = 'metrics-token-0123456789';

  test('METRICS_TOKEN: /metrics wants that bearer token; the probes never do, and an API key is no token', async () => {
    const t = await start({ METRICS_TOKEN: token });
    const { key } = await makeTenant(t.db, t.config);
    const attempts: Record<string, string>[] = [
      {},
      { authorization: `Bearer ${token}x` },
      { authorization: `Bearer ${key}` },
      { 'x-service-api-key': key },
      { authorization: token },
    ];
    for (const headers of attempts) {
      const res = await get(t.app, '/metrics', headers);
      assert.deepEqual(
        [res.status, res.body],
        [401, { statusCode: 401, error: 'Unauthorized', code: 'METRICS_TOKEN_REQUIRED', message: 'Metrics token is required' }],
        JSON.stringify(headers),
      );
      assert.equal(res.headers['www-authenticate'], 'Bearer realm="metrics"');
    }
    const ok = await t.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${token}` } });
    assert.equal(ok.statusCode, 200);
    assert.match(ok.body, /^herald_info\{/m);
    assert.equal((await get(t.app, '/healthz')).status, 200);
    assert.equal((await get(t.app, '/readyz')).status, 200);
  });

  test('a worker exposes its probes and /metrics on METRICS_PORT, with its dispatcher in readiness', async () => {
    const t = await startTestHerald({ METRICS_PORT: '0' }, { role: 'worker' }).then((w) => {
      started.push(w);
      return w;
    });
    assert.equal(t.herald.app, undefined, 'no API in a worker');
    const ops = t.herald.metricsApp!;
    assert.deepEqual((await get(ops, '/readyz')).body, { status: 'ok', checks: { database: 'ok', dispatcher: 'ok' } });
    const metrics = await ops.inject({ method: 'GET', url: '/metrics' });
    assert.equal(metrics.statusCode, 200);
    assert.match(metrics.body, /^herald_info\{version="[^"]+",role="worker",engine="(sqlite|postgres)"\} 1$/m);
    assert.equal((await get(ops, '/api/leads')).status, 404, 'only the probes and metrics');
  });

  test('with METRICS_PORT an API process keeps its probes on PORT but serves /metrics only on METRICS_PORT', async () => {
    const t = await start({ METRICS_PORT: '0' }, { role: 'api' });
    assert.equal((await get(t.app, '/metrics')).status, 404);
    assert.equal((await get(t.app, '/readyz')).status, 200);
    assert.notEqual(t.herald.metricsApp, t.app);
    assert.equal((await t.herald.metricsApp!.inject({ method: 'GET', url: '/metrics' })).statusCode, 200);
  });

  test('config: a short METRICS_TOKEN and a METRICS_PORT equal to PORT are refused', () => {
    assert.throws(
      () => loadConfig({ HERALD_SECRET: 's', METRICS_TOKEN: 'short' }),
      (err) => err instanceof ConfigError && /METRICS_TOKEN must be at least 16 characters/.test(err.message),
    );
    assert.throws(() => loadConfig({ HERALD_SECRET: 's', PORT: '4000', METRICS_PORT: '4000' }), /METRICS_PORT must differ from PORT/);
    assert.throws(() => loadConfig({ HERALD_SECRET: 's', METRICS_PORT: 'x' }), /METRICS_PORT must be a whole number/);
    assert.equal(loadConfig({ HERALD_SECRET: 's', METRICS_PORT: '9464' }).metricsPort, 9464);
    assert.equal(loadConfig({ HERALD_SECRET: 's' }).metricsPort, undefined);
  });
});
