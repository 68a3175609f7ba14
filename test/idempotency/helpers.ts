import type { Db } from '../../src/db/connect.js';

/** Reads of the rows an effect leaves, to count effects (not through the API: a replay must not hide a second row). */

export async function countSends(db: Db, accountId: string, campaignId: string): Promise<number> {
  const row = await db.kysely
    .selectFrom('sends')
    .select((eb) => eb.fn.countAll().as('n'))
    .where('account_id', '=', accountId)
    .where('campaign_id', '=', campaignId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function sendIds(db: Db, accountId: string, campaignId: string): Promise<string[]> {
  const rows = await db.kysely
    .selectFrom('sends')
    .select('id')
    .where('account_id', '=', accountId)
    .where('campaign_id', '=', campaignId)
    .execute();
  return rows.map((r) => r.id);
}

export async function countEvents(db: Db, accountId: string, contactId: string): Promise<number> {
  const row = await db.kysely
    .selectFrom('events')
    .select((eb) => eb.fn.countAll().as('n'))
    .where('account_id', '=', accountId)
    .where('contact_id', '=', contactId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function countContactsWithEmail(db: Db, accountId: string, email: string): Promise<number> {
  const row = await db.kysely
    .selectFrom('contact_emails')
    .select((eb) => eb.fn.countAll().as('n'))
    .where('account_id', '=', accountId)
    .where('email', '=', email)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Makes a stored key older by `ms` (as if it had been sent that long ago). */
export async function ageKey(db: Db, accountId: string, key: string, ms: number): Promise<void> {
  const row = await db.kysely
    .selectFrom('idempotency_keys')
    .select('created_at')
    .where('account_id', '=', accountId)
    .where('key', '=', key)
    .executeTakeFirstOrThrow();
  await db.kysely
    .updateTable('idempotency_keys')
    .set({ created_at: Number(row.created_at) - ms })
    .where('account_id', '=', accountId)
    .where('key', '=', key)
    .execute();
}

export async function keyRowExists(db: Db, accountId: string, key: string): Promise<boolean> {
  const row = await db.kysely
    .selectFrom('idempotency_keys')
    .select('key')
    .where('account_id', '=', accountId)
    .where('key', '=', key)
    .executeTakeFirst();
  return row !== undefined;
}
