import type { Kysely } from 'kysely';
import type { Db } from './connect.js';
import type { Database } from './schema.js';
import { inStatement } from './transaction.js';

/**
 * The one query handle of every repository function: the app's database or a Kysely bound
 * to an open transaction, so the same function runs alone or inside a caller's unit of work.
 */
export type Queryable = Db | Kysely<Database>;

export function kyselyOf(db: Queryable): Kysely<Database> {
  return isDb(db) ? db.kysely : db;
}

/**
 * A write on `q`: part of the caller's transaction when `q` is one, else a unit of work of its
 * own (inStatement: on SQLite in the commit queue, never a commit that syncs on the event loop).
 * Every repository write goes through here or through a transaction; reads use kyselyOf.
 */
export function writeOn<T>(q: Queryable, statement: (k: Kysely<Database>) => Promise<T>): Promise<T> {
  return isDb(q) ? inStatement(q, statement) : statement(q);
}

function isDb(q: Queryable): q is Db {
  return 'engine' in q && 'kysely' in q;
}
