import { type Kysely, PostgresAdapter, sql } from 'kysely';

/**
 * PostgreSQL only: trigram indexes for the contact search, which finds text anywhere in a
 * name or an email (contact-search.repo.ts, docs/decisions.md "Contacts at scale"). A LIKE
 * '%text%' cannot use a b-tree; a pg_trgm GIN index can, when the text has 3 characters or
 * more and is rare enough that the planner prefers it to the newest-first scan.
 *
 * pg_trgm ships with PostgreSQL (postgresql-contrib, part of Debian's server package and of the
 * official images) and is a trusted extension since PostgreSQL 13: the database's owner may
 * create it. Where it is not installed, the search still works, by scanning (as on SQLite),
 * so the migration leaves the indexes out rather than failing.
 */
const isPostgres = (db: Kysely<any>) => db.getExecutor().adapter instanceof PostgresAdapter;

export async function up(db: Kysely<any>): Promise<void> {
  if (!isPostgres(db)) return;
  const { rows } = await sql`select 1 from pg_available_extensions where name = 'pg_trgm'`.execute(db);
  if (rows.length === 0) return;
  await sql`create extension if not exists pg_trgm`.execute(db);
  // The operator class lives in the schema the extension was installed in, which need not be
  // on this database's search_path (Herald's tables in a schema of their own): named in full.
  const { rows: installed } = await sql<{ schema: string }>`
    select n.nspname as schema from pg_extension e join pg_namespace n on n.oid = e.extnamespace where e.extname = 'pg_trgm'`.execute(db);
  const ops = sql`${sql.id(installed[0]!.schema)}.gin_trgm_ops`;
  // lower(name): the search compares names lowercased on PostgreSQL; emails are stored lowercased.
  await sql`create index contacts_name_trgm on contacts using gin (lower(name) ${ops})`.execute(db);
  await sql`create index contact_emails_email_trgm on contact_emails using gin (email ${ops})`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  if (!isPostgres(db)) return;
  await sql`drop index if exists contact_emails_email_trgm`.execute(db);
  await sql`drop index if exists contacts_name_trgm`.execute(db);
}
