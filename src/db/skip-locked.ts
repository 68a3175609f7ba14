import { sql } from 'kysely';
import type { Db } from './connect.js';

/**
 * The lock of a queue's claim (sends, webhook deliveries): on PostgreSQL each row picked is locked
 * and a row another transaction holds is passed over, so any number of workers share the queue;
 * SQLite has one writer and no row locks.
 */
export const skipLocked = (db: Pick<Db, 'engine'>) => (db.engine === 'postgres' ? sql`for update skip locked` : sql``);
