import type { Kysely } from 'kysely';
import type { Db } from './connect.js';
import type { Database } from './schema.js';

/**
 * The one query handle of every repository function: the app's database or a Kysely bound
 * to an open transaction, so the same function runs alone or inside a caller's unit of work.
 */
export type Queryable = Db | Kysely<Database>;

export function kyselyOf(db: Queryable): Kysely<Database> {
  return 'engine' in db && 'kysely' in db ? db.kysely : db;
}
