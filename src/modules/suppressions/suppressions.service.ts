import type { Queryable } from '../../db/queryable.js';
import type { SuppressedAddressesTable } from '../../db/schema.js';
import * as repo from './suppressions.repo.js';

type Channel = SuppressedAddressesTable['channel'];

/** An address that bounced: later sends to it end in error before they are tried. */
export interface Suppression {
  channel: Channel;
  address: string;
  /** The refusal that put it here, e.g. `smtp 550: 5.1.1 No such user`. */
  reason: string;
  sendId: string;
  createdAt: number;
}

/**
 * Puts an address on the account's suppression list (decisions.md, Email: bounces). Called in
 * the transaction that ends the bounced send, so the two never disagree.
 */
export async function suppressAddress(
  db: Queryable,
  entry: { accountId: string; channel: Channel; address: string; reason: string; sendId: string; now: number },
): Promise<void> {
  await repo.insertSuppression(db, {
    account_id: entry.accountId,
    channel: entry.channel,
    address: entry.address,
    reason: entry.reason,
    send_id: entry.sendId,
    created_at: entry.now,
  });
}

/** Which of a batch of due sends' addresses are suppressed, from the suppressed rows read with the batch (due-checks.ts; the PostgreSQL claim). */
export function suppressedFrom(
  rows: { account_id: string; channel: Channel; address: string }[],
): (accountId: string, channel: Channel, address: string) => boolean {
  const found = new Set(rows.map((r) => repo.suppressionKey(r.account_id, r.channel, r.address)));
  return (accountId, channel, address) => found.has(repo.suppressionKey(accountId, channel, address));
}

/** The suppressed addresses among a contact's addresses (the contact's profile shows them). */
export async function suppressionsOf(db: Queryable, accountId: string, addresses: string[]): Promise<Suppression[]> {
  const rows = await repo.selectSuppressionsOf(db, accountId, addresses);
  return rows.map((r) => ({
    channel: r.channel,
    address: r.address,
    reason: r.reason,
    sendId: r.send_id,
    createdAt: Number(r.created_at),
  }));
}

/** Lifts a suppression (an administrator knows the mailbox works again). False when there was none. */
export function liftSuppression(db: Queryable, accountId: string, channel: Channel, address: string): Promise<boolean> {
  return repo.deleteSuppression(db, accountId, channel, address);
}
