import { kyselyOf, type Queryable, writeOn } from '../../db/queryable.js';
import type { SuppressedAddressesTable } from '../../db/schema.js';

type Channel = SuppressedAddressesTable['channel'];

/** The first bounce is the one kept: a later one for the same address changes nothing. */
export async function insertSuppression(db: Queryable, row: SuppressedAddressesTable): Promise<void> {
  await writeOn(db, (q) =>
    q
      .insertInto('suppressed_addresses')
      .values(row)
      .onConflict((oc) => oc.columns(['account_id', 'channel', 'address']).doNothing())
      .execute(),
  );
}

/** Which of these (account, channel, address) are suppressed, as `account|channel|address` keys. */
export async function selectSuppressed(
  db: Queryable,
  wanted: { accountId: string; channel: Channel; address: string }[],
): Promise<Set<string>> {
  if (wanted.length === 0) return new Set();
  const rows = await kyselyOf(db)
    .selectFrom('suppressed_addresses')
    .select(['account_id', 'channel', 'address'])
    .where((eb) =>
      eb.or(wanted.map((w) => eb.and([eb('account_id', '=', w.accountId), eb('channel', '=', w.channel), eb('address', '=', w.address)]))),
    )
    .execute();
  return new Set(rows.map((r) => suppressionKey(r.account_id, r.channel, r.address)));
}

export function suppressionKey(accountId: string, channel: Channel, address: string): string {
  return `${accountId}|${channel}|${address}`;
}

export async function selectSuppressionsOf(db: Queryable, accountId: string, addresses: string[]) {
  if (addresses.length === 0) return [];
  return kyselyOf(db)
    .selectFrom('suppressed_addresses')
    .select(['channel', 'address', 'reason', 'send_id', 'created_at'])
    .where('account_id', '=', accountId)
    .where('address', 'in', addresses)
    .orderBy('created_at')
    .execute();
}

/** Returns whether a row was removed. */
export async function deleteSuppression(db: Queryable, accountId: string, channel: Channel, address: string): Promise<boolean> {
  const result = await writeOn(db, (q) =>
    q
      .deleteFrom('suppressed_addresses')
      .where('account_id', '=', accountId)
      .where('channel', '=', channel)
      .where('address', '=', address)
      .executeTakeFirst(),
  );
  return Number(result.numDeletedRows) > 0;
}
