/**
 * Writes the two served OpenAPI documents (`/openapi.json`, `/admin/openapi.json`) to the
 * directory given as argument, for the linters (tools/openapi/lint.sh). The app is built
 * in-process on a throwaway SQLite database and asked over app.inject(): no port, no network.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { openDatabase } from '../../src/db/connect.js';

const out = process.argv[2];
if (!out) throw new Error('usage: write-documents.ts <directory>');

const dataDir = mkdtempSync(join(tmpdir(), 'herald-openapi-'));
const config = loadConfig({
  HERALD_SECRET: 'openapi-lint-only',
  DATA_DIR: dataDir,
  PUBLIC_URL: process.env.PUBLIC_URL || 'https://herald.internal.test',
});
const db = await openDatabase(config);
const app = await buildApp({ config, db, logger: pino({ level: 'silent' }) });
try {
  for (const [url, file] of [
    ['/openapi.json', 'public.json'],
    ['/admin/openapi.json', 'admin.json'],
  ] as const) {
    const res = await app.inject({ method: 'GET', url });
    if (res.statusCode !== 200) throw new Error(`${url} answered ${res.statusCode}: ${res.body}`);
    writeFileSync(join(out, file), `${JSON.stringify(res.json(), null, 2)}\n`);
  }
} finally {
  await app.close();
  await db.close();
  rmSync(dataDir, { recursive: true, force: true });
}
