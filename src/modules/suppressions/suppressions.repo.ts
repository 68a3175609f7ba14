import { sql } from 'kysely';
import { onPostgres } from '../../db/constant-statements.js';
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

/**
 * Which of the (account, channel, address) triples of a JSON parameter (`[[account, channel,
 * address], ...]`) are suppressed: a key look-up each. The due-time checks of a batch
 * (dispatcher/due-checks.ts), compiled once for any number of triples.
 */
export function suppressedAmongQuery(q: Queryable, triples: unknown) {
  const wanted = onPostgres(kyselyOf(q)) ? sql`json_array_elements(cast(${triples} as json)) as w(value)` : sql`json_each(${triples}) as w`;
  return sql<{ account_id: string; channel: Channel; address: string }>`select distinct s.account_id, s.channel, s.address from ${wanted}
    join suppressed_addresses s on s.account_id = w.value ->> 0 and s.channel = w.value ->> 1 and s.address = w.value ->> 2`;
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
