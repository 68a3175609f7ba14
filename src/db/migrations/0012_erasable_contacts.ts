import { type Kysely, SqliteAdapter, sql } from 'kysely';

/**
 * Erasing a contact (docs/decisions.md, Erasing a contact) keeps its sends as anonymous rows so
 * campaign statistics do not change: their contact_id becomes a placeholder that names no
 * contact, so the foreign key sends.contact_id -> contacts.id goes. Engagements never had one.
 * PostgreSQL drops the constraint; SQLite cannot, so the table is rebuilt from its own stored
 * definition minus that clause (SQLite's documented 12-step table change; Kysely runs SQLite
 * migrations outside a transaction, so foreign keys can be switched off around it).
 */
export async function up(db: Kysely<any>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof SqliteAdapter)) {
    await sql`alter table sends drop constraint if exists sends_contact_id_fkey`.execute(db);
    return;
  }
  await rebuildSendsSqlite(db, (create) => create.replace(/("contact_id"\s+text\s+not null)\s+references\s+"contacts"\s*\("id"\)/i, '$1'));
}

export async function down(db: Kysely<any>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof SqliteAdapter)) {
    await sql`alter table sends add constraint sends_contact_id_fkey foreign key (contact_id) references contacts (id)`.execute(db);
    return;
  }
  await rebuildSendsSqlite(db, (create) => create.replace(/("contact_id"\s+text\s+not null)/i, '$1 references "contacts" ("id")'));
}

async function rebuildSendsSqlite(db: Kysely<any>, change: (createSql: string) => string): Promise<void> {
  const { rows } = await sql<{ type: string; sql: string }>`
    select type, sql from sqlite_master where tbl_name = 'sends' and sql is not null`.execute(db);
  const table = rows.find((r) => r.type === 'table');
  if (!table) throw new Error('table sends not found');
  const changed = change(table.sql);
  if (changed === table.sql) throw new Error('sends: the contact_id clause was not found');
  const createNew = changed.replace(/^create table\s+"?sends"?/i, 'create table "sends_new"');
  await sql`pragma foreign_keys = off`.execute(db);
  try {
    await sql.raw(createNew).execute(db);
    await sql`insert into sends_new select * from sends`.execute(db);
    await sql`drop table sends`.execute(db);
    await sql`alter table sends_new rename to sends`.execute(db);
    for (const index of rows.filter((r) => r.type === 'index')) await sql.raw(index.sql).execute(db);
    const { rows: broken } = await sql`pragma foreign_key_check`.execute(db);
    if (broken.length > 0) throw new Error('sends rebuild left foreign key violations');
  } finally {
    await sql`pragma foreign_keys = on`.execute(db);
  }
}
