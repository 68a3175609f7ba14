import type { Db } from '../../src/db/connect.js';
import type { Role } from '../../src/herald.js';
import { startService, type TestService } from './harness.js';

export { makeEmailCampaign } from './factories.js';

export type TestHerald = TestService;

/** The whole service as `npm start` assembles it (HTTP API + dispatcher + webhooks), on a real database. See harness.ts. */
export function startTestHerald(
  env: Record<string, string> = {},
  options: { role?: Role; leaseMs?: number; stalledAfterMs?: number } = {},
): Promise<TestHerald> {
  return startService({ env, role: options.role, dispatcher: { leaseMs: options.leaseMs, stalledAfterMs: options.stalledAfterMs } });
}

/** Waits until check() is true (polling), or fails after timeoutMs. */
export async function eventually<T>(
  check: () => Promise<T | undefined | false> | T | undefined | false,
  timeoutMs = 5000,
  what = 'condition',
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function sendRow(db: Db, sendId: string) {
  return db.kysely.selectFrom('sends').selectAll().where('id', '=', sendId).executeTakeFirstOrThrow();
}
