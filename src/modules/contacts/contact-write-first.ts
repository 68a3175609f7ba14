import { type CompiledQuery, type RawBuilder, sql } from 'kysely';
import { bindIn, StatementShapes } from '../../db/constant-statements.js';
import type { Tx } from '../../db/transaction.js';
import {
  type ContactWritePlan,
  contactWriteParts,
  contactWriteShapeKey,
  contactWriteShapeOf,
  contactWriteValues,
} from './contact-write-plan.js';
import {
  type ContactWriteRead,
  type ContactWriteReadRow,
  type ContactWriteReadValues,
  contactWriteReadOf,
  contactWriteReadParts,
  contactWriteReadShape,
  contactWriteReadStatement,
  definitionsUnchangedSql,
  nobodyFoundSql,
} from './contact-write-read.js';

/** What the rules decided before the read: the write if it finds nobody, and if it finds the contact. */
export interface PlansBeforeRead {
  /** A create (the plan of an empty read); undefined: a read that finds nobody is decided as usual. */
  ifNobody?: ContactWritePlan;
  /**
   * An update of the contact found, whoever it is (its `contactId` is not used: the statement
   * takes the id its read picks); undefined: a read that finds someone is decided as usual.
   */
  ifFound?: ContactWritePlan;
  /**
   * The custom field and KPI definitions both plans were decided on (definitionRows), when the
   * lead names some: the statement writes only if its read finds exactly these, else it returns
   * what it read, fresh definitions included. Undefined: the lead names none.
   */
  definitions?: string;
}

/** `written`: the plan for what the read found was applied; `read`: nothing was written, decide from it. */
export type FirstOutcome = { written: 'created' | 'updated'; id: string; kpisAdded: string[] } | { read: ContactWriteRead };

/** The statement of writeUnlessReadStatement, not run yet (the caller runs it alone, or in a pipeline: db/pipeline.ts), and what its rows come to. */
export interface WriteUnlessReadStatement {
  query: CompiledQuery<FirstRow>;
  outcome(rows: readonly FirstRow[]): FirstOutcome;
}

/** A row of the statement: what it wrote (the contact, its KPIs), or what it read. */
export interface FirstRow {
  kind: string;
  id: string | null;
}

/**
 * A lead write in ONE statement on PostgreSQL (issue 12), not run yet: the write's read and, in the same
 * data-modifying CTE, the plan the rules decided for what it may find. `r` is the read
 * (contact-write-read.ts, of the values `read`, which must have rows: contactWriteReadHasRows).
 * The create (`ifNobody`) inserts only when `r` finds nobody (no owner, no contact); the
 * update (`ifFound`, its CTEs named `u_…`) writes the contact `r` picked, with no version guard:
 * nothing the plan rests on is in the contact's row, and the update takes the row's lock and
 * writes its newest version. The read does not lock: the statement runs alone, autocommit, so a
 * lock would add only a WAL record (readForContactWrite says why a read locks in a transaction
 * only). With `definitions`, either writes only when `r`'s field and KPI rows are those the
 * plans were decided on. At most one of them writes; when neither does (someone found and no
 * plan for it, the contact erased between the read's owner and its row, or other definitions
 * found) the statement returns what it read for the usual decision and write, as without this. The text depends only on the shapes of the read
 * and of the two plans: compiled once per combination (db/constant-statements.ts).
 *
 * Two requests creating one new address both find nobody: the second insert of the address is
 * a unique violation, which fails its whole statement, and inWriteUnit runs that unit again.
 */
export function writeUnlessReadStatement(
  q: Tx,
  accountId: string,
  read: ContactWriteReadValues,
  plans: PlansBeforeRead,
): WriteUnlessReadStatement {
  const ifNobody = plans.ifNobody && contactWriteShapeOf(plans.ifNobody);
  const ifFound = plans.ifFound && contactWriteShapeOf(plans.ifFound);
  const guarded = plans.definitions !== undefined;
  const shape = `${contactWriteReadShape(read)} ${ifNobody ? contactWriteShapeKey(ifNobody) : '-'} ${ifFound ? contactWriteShapeKey(ifFound) : '-'}${guarded ? ' d' : ''}`;
  // The read's and each plan's values in groups of their own: their names would collide.
  const values = {
    read,
    n: plans.ifNobody && contactWriteValues(accountId, plans.ifNobody),
    u: plans.ifFound && contactWriteValues(accountId, plans.ifFound),
    definitions: plans.definitions,
  };
  const query = STATEMENTS.compile(q, shape, values, (bind) => {
    const parts: RawBuilder<unknown>[] = [
      sql`r as (${contactWriteReadStatement(contactWriteReadParts(false, read, bindIn(bind, 'read')))})`,
    ];
    // The definitions the read finds are those the plans were decided on.
    const sameDefinitions = guarded ? sql` and ${definitionsUnchangedSql(bind)}` : sql``;
    const results: RawBuilder<unknown>[] = [];
    const written: RawBuilder<unknown>[] = [];
    if (ifNobody) {
      const nobody = sql`${nobodyFoundSql()}${sameDefinitions}`;
      const create = contactWriteParts(bindIn(bind, 'n'), ifNobody, { insertOnlyIf: nobody });
      parts.push(...create.parts);
      results.push(...create.results);
      written.push(sql`not exists (select 1 from c)`);
    }
    if (ifFound) {
      const update = contactWriteParts(
        bindIn(bind, 'u'),
        ifFound,
        { updateFound: sql`(select id from r where kind = 'contact'${sameDefinitions})` },
        'u_',
      );
      parts.push(...update.parts);
      results.push(...update.results);
      written.push(sql`not exists (select 1 from u_c)`);
    }
    // The read's rows as one JSON array (one column, like the statement's other result rows), when nothing was written.
    results.push(sql`select 'read' as kind, cast(json_agg(r) as text) as id from r where ${sql.join([sql`true`, ...written], sql` and `)}`);
    return sql<FirstRow>`with ${sql.join(parts, sql`, `)} ${sql.join(results, sql` union all `)}`;
  });
  return { query, outcome: firstOutcome };
}

function firstOutcome(rows: readonly FirstRow[]): FirstOutcome {
  const kpisAdded = (kind: string) => rows.filter((row) => row.kind === kind).map((row) => row.id!);
  for (const row of rows) {
    if (row.kind === 'contact') return { written: 'created', id: row.id!, kpisAdded: kpisAdded('kpi') };
    if (row.kind === 'u_contact') return { written: 'updated', id: row.id!, kpisAdded: kpisAdded('u_kpi') };
  }
  const found = rows.find((row) => row.kind === 'read')?.id;
  return { read: contactWriteReadOf(found ? (JSON.parse(found) as ContactWriteReadRow[]) : []) };
}

/** The statements of writeUnlessReadStatement, compiled once per shape. */
const STATEMENTS = new StatementShapes();
