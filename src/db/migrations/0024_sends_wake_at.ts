import { type Kysely, sql } from 'kysely';

/**
 * The dispatcher finds waiting sends by `wake_at`, no longer by `due_at` (decisions.md, "A
 * restart leaves the queue's index alone"). A Delay restart moves `due_at` later; with `due_at`
 * in the queue's index every restart wrote a new entry in each of the send's indexes (six), as
 * PostgreSQL can update a row in place of its indexes (a HOT update) only when no indexed value
 * changes. `wake_at` is when the dispatcher looks at a send again, never after `due_at`; a
 * restart that moves `due_at` later leaves it, and a claim that finds a send awake but not due
 * sets it to `due_at` (dispatch.repo.ts, rearmWoken).
 *
 * The default 0 (awake at once) is the safe value for a row written without it: the next claim
 * sets it. The waiting sends of an existing table get theirs here, so the first claims after the
 * upgrade do not re-arm every waiting send. Adding a column with a constant default is instant
 * on PostgreSQL (no table rewrite); the index build blocks writes to `sends` meanwhile, like the
 * earlier index migrations (docs/decisions.md).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('sends')
    .addColumn('wake_at', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute();
  await sql`update sends set wake_at = due_at where status in ('pending', 'queued')`.execute(db);
  await db.schema.createIndex('sends_wake').on('sends').columns(['status', 'wake_at']).execute();
  await db.schema.dropIndex('sends_due').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.createIndex('sends_due').on('sends').columns(['status', 'due_at']).execute();
  await db.schema.dropIndex('sends_wake').execute();
  await db.schema.alterTable('sends').dropColumn('wake_at').execute();
}
