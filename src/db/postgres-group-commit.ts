import type { PostgresPool, PostgresPoolClient } from 'kysely';
import type pg from 'pg';
import type { NamingClient } from './prepared-statements.js';
import { type GroupedStatement, preparedValues, refusedByServer, submitGroup } from './statement-group.js';

/**
 * Group commit on PostgreSQL (issue 12): the statements that public writes run on their own
 * (autocommit: write-unit.ts's first attempt) and that arrive while earlier ones are in flight
 * are sent together, in one write on one connection, and committed as ONE transaction.
 *
 * Why: each autocommit statement costs a commit (a WAL flush the server waits for) and a round
 * trip (a socket write in Node and a wake-up of a server process). On the 2-core VM those, not
 * the statements' own work, were most of a lead create's cost on both sides: measured with
 * pgbench, five creates per transaction ran 2.4 times as many creates per CPU-second as one per
 * transaction. SQLite has done the same since the start (db/transaction.ts).
 *
 * How: a statement goes out at once, alone and unchanged, while no group is running (one that has
 * run for STALLED_GROUP_MS does not count); otherwise it waits for the group to finish and leaves
 * with every statement that waited (at most MAX_GROUP_SIZE). No delay is added: an idle service
 * sends every statement alone, at once.
 *
 * A group answers its callers only once it has committed. A statement of a group sees what the
 * statements before it in the group wrote (one transaction), which is what it would have seen
 * had they committed just before it: the group commits all of them or none. When the server
 * refuses one statement (a lost race on a unique key, a deadlock) the group is rolled back and
 * each of its statements runs again on its own, so each caller gets what its statement alone
 * gets, and a lost race is handled where it was before (write-unit.ts). A lost connection or a
 * server shutting down is the error of every statement of the group, run again by nobody: the
 * group may have committed, exactly as a single statement may have (the caller's retry,
 * idempotent with an Idempotency-Key, is the answer for both).
 */

/**
 * Groups running at once, each on its own connection of the pool, unless one has stalled. One
 * makes the largest groups: measured on the peers harness's lines, 30–45% less server CPU and
 * 15–30% less API CPU per request than two.
 */
export const MAX_GROUPS_IN_FLIGHT = 1;
/**
 * A group running this long has stalled (a statement waiting for a row lock that a transaction
 * holds, or a slow one) and no longer holds the others back: the next group starts beside it.
 */
export const STALLED_GROUP_MS = 20;
/** Groups running at once, stalled ones included (each holds a connection of the pool). */
export const MAX_GROUPS_STALLED = 4;
/** Statements in one group at most: a bound on what one rollback sends back to run alone. */
export const MAX_GROUP_SIZE = 64;

interface Waiting extends GroupedStatement {
  resolve(result: pg.QueryResult): void;
  reject(err: unknown): void;
}

/** How the group commit has grouped so far (tests, and a measure of what it does under load). */
export interface GroupCommitCounts {
  /** Statements sent in groups of two or more. */
  grouped: number;
  /** Groups of two or more sent. */
  groups: number;
  /** Groups rolled back by the server, whose statements ran again alone. */
  rolledBack: number;
}

export class GroupCommit {
  private readonly waiting: Waiting[] = [];
  /** When each running group started (performance.now()). */
  private readonly running = new Set<{ startedAt: number }>();
  /** Set while statements wait behind a group that may stall: pump() again when it would have. */
  private stallCheck: NodeJS.Timeout | undefined;
  readonly counts: GroupCommitCounts = { grouped: 0, groups: 0, rolledBack: 0 };

  constructor(private readonly pool: pg.Pool) {}

  /** Runs one autocommit statement, in a group when others are waiting. */
  query(text: string, values: readonly unknown[] = []): Promise<pg.QueryResult> {
    if (/^\s*(begin|start\s+transaction)\b/i.test(text)) {
      return Promise.reject(new Error('a transaction cannot run in a group commit: use the pool (db.kysely)'));
    }
    let prepared: unknown[];
    try {
      prepared = preparedValues(values);
    } catch (err) {
      return Promise.reject(err);
    }
    return new Promise((resolve, reject) => {
      this.waiting.push({ text, values: prepared, name: undefined, resolve, reject });
      this.pump();
    });
  }

  private pump(): void {
    while (this.waiting.length > 0 && this.running.size < MAX_GROUPS_STALLED && this.activeGroups() < MAX_GROUPS_IN_FLIGHT) {
      const group = this.waiting.splice(0, MAX_GROUP_SIZE);
      const running = { startedAt: performance.now() };
      this.running.add(running);
      void this.run(group).finally(() => {
        this.running.delete(running);
        this.pump();
      });
    }
    if (this.waiting.length > 0 && this.stallCheck === undefined) {
      this.stallCheck = setTimeout(() => {
        this.stallCheck = undefined;
        this.pump();
      }, STALLED_GROUP_MS);
    }
  }

  /** Running groups that have not stalled. */
  private activeGroups(): number {
    const since = performance.now() - STALLED_GROUP_MS;
    let active = 0;
    for (const group of this.running) if (group.startedAt > since) active++;
    return active;
  }

  private async run(group: Waiting[]): Promise<void> {
    if (group.length === 1) return this.alone(group[0]!);
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (err) {
      for (const statement of group) statement.reject(err);
      return;
    }
    const naming = client as unknown as NamingClient;
    for (const statement of group) statement.name = naming.statementName?.(statement.text);
    let results: pg.QueryResult[];
    try {
      results = await submitGroup(client, group);
    } catch (err) {
      const rolledBack = refusedByServer(err);
      client.release(rolledBack ? undefined : (err as Error));
      if (!rolledBack) {
        for (const statement of group) statement.reject(err);
        return;
      }
      this.counts.rolledBack++;
      await Promise.all(group.map((statement) => this.alone(statement)));
      return;
    }
    client.release();
    this.counts.groups++;
    this.counts.grouped += group.length;
    group.forEach((statement, i) => statement.resolve(results[i]!));
  }

  /** One statement on a connection of its own, as Kysely runs it on the pool (named when prepared statements are on). */
  private async alone(statement: Waiting): Promise<void> {
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (err) {
      statement.reject(err);
      return;
    }
    try {
      // (text, values) and no callback: the form prepared-statements.ts names (pool.query adds a callback).
      statement.resolve(await client.query(statement.text, statement.values));
    } catch (err) {
      statement.reject(err);
    } finally {
      client.release();
    }
  }
}

/**
 * The pool Kysely sees for db.grouped: every connection it asks for is the group commit itself
 * (Kysely runs one statement per acquire outside a transaction, and keeps no state of its own
 * on the client). A transaction begun on it is refused by GroupCommit.query.
 */
export function groupCommitPool(group: GroupCommit): PostgresPool {
  const client: PostgresPoolClient = {
    query: ((text: string, values: readonly unknown[]) => group.query(text, values)) as unknown as PostgresPoolClient['query'],
    release: () => undefined,
  };
  return { connect: async () => client, end: async () => undefined };
}
