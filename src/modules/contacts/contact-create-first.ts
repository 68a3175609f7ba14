import { type RawBuilder, sql } from 'kysely';
import type { Tx } from '../../db/transaction.js';
import { type ContactWritePlan, contactWriteStatement } from './contact-write-plan.js';
import { type ContactWriteRead, type ContactWriteReadRow, contactWriteReadOf } from './contact-write-read.js';

/**
 * A lead write that would create its contact, in ONE statement on PostgreSQL (issue 12): the
 * write's read and, when it finds nobody, the create the rules decided for an empty read, in one
 * data-modifying CTE. `r` is the read (contact-write-read.ts); the insert of the contact runs
 * only when `r` is empty, and every other part selects from it, so when someone owns an
 * identifier the statement writes nothing and returns what it read, for the usual decision and
 * write (two statements in all, as without this). Two requests creating one new address both
 * find nobody: the second insert of the address is a unique violation, which fails its whole
 * statement, and inWriteUnit runs that unit again, as for every lost race.
 */
export async function createUnlessFound(
  q: Tx,
  accountId: string,
  read: RawBuilder<ContactWriteReadRow>,
  plan: ContactWritePlan,
): Promise<{ created: true } | { created: false; read: ContactWriteRead }> {
  const statement = contactWriteStatement(accountId, plan, {
    before: [sql`r as (${read})`],
    insertOnlyIf: sql`not exists (select 1 from r)`,
    // The read's rows as one JSON array (one column, like the statement's other result rows).
    results: [sql`select 'read' as kind, cast(json_agg(r) as text) as id from r`],
  });
  const { rows } = await sql<{ kind: string; id: string | null }>`${statement}`.execute(q);
  if (rows.some((row) => row.kind === 'contact')) return { created: true };
  const found = rows.find((row) => row.kind === 'read')?.id;
  return { created: false, read: contactWriteReadOf(found ? (JSON.parse(found) as ContactWriteReadRow[]) : []) };
}
