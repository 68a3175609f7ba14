import pg from 'pg';
import { type Description, describedOnce, rememberDescription } from './described-once.js';

/**
 * Named (prepared) statements for the PostgreSQL pool (issue 12).
 *
 * Kysely sends every statement unnamed, so PostgreSQL parses and plans it again on every call.
 * For Herald's write statements (data-modifying CTEs) planning cost more server CPU than running
 * them: about 0.15–0.35 ms of 0.2–0.5 ms. On a machine where the server and Node share the
 * cores, that time is taken from Node too. A statement text that runs again gets a name; each
 * connection parses it once, and after five runs PostgreSQL keeps a generic plan when it costs
 * no more than the custom ones (plan_cache_mode auto), so a hot write is only bound and run.
 *
 * Only texts seen twice are named (a one-off admin read stays unnamed), and at most
 * MAX_NAMED per pool: statements whose IN lists vary in length cannot fill the server's memory.
 *
 * A migration that changes a table under a running process (an upgrade: the new version
 * migrates while the old one still serves) makes PostgreSQL refuse the prepared statements
 * whose result columns changed ("cached plan must not change result type"). The pool then
 * starts a new generation of names, which every connection prepares afresh, and the statement
 * runs again unnamed when it was alone (outside a transaction, nothing of it happened).
 *
 * A named statement's result columns are described once per connection: its first run asks
 * for them (Describe), later runs on that connection reuse them (described-once.ts).
 *
 * Off with DATABASE_PREPARED_STATEMENTS=false, for a pooler that cannot keep named statements
 * apart per server connection (PgBouncer in transaction mode before 1.21, or without
 * max_prepared_statements).
 */

/**
 * What a caller that writes statements itself (a group commit, a pipeline) needs of a pool's
 * client: PreparingClient's names, absent on a plain pg.Client (prepared statements off).
 */
export interface NamingClient {
  statementName?(text: string): string | undefined;
  forgetNamesIfStale?(err: unknown): void;
}

/** Distinct statement texts named per pool (each connection prepares at most these). */
const MAX_NAMED = 200;
/** Texts seen once, remembered to spot the second run; forgotten all at once when full. */
const MAX_SEEN_ONCE = 5_000;

class StatementNames {
  private names = new Map<string, string>();
  private seenOnce = new Set<string>();
  private generation = 1;

  /** The name of `text`, or undefined while it should run unnamed. */
  nameOf(text: string): string | undefined {
    const name = this.names.get(text);
    if (name !== undefined || this.names.size >= MAX_NAMED) return name;
    if (!this.seenOnce.has(text)) {
      if (this.seenOnce.size >= MAX_SEEN_ONCE) this.seenOnce.clear();
      this.seenOnce.add(text);
      return undefined;
    }
    this.seenOnce.delete(text);
    const next = `herald_${this.generation}_${this.names.size + 1}`;
    this.names.set(text, next);
    return next;
  }

  /** After a schema change: every name so far may be stale on every connection. */
  startNewGeneration(): void {
    this.names.clear();
    this.generation++;
  }
}

/** SQLSTATE 0A000 with this message: a prepared statement outlived a change of its table. */
function isStalePlan(err: unknown): boolean {
  const e = err as { code?: string; message?: string } | null;
  return e?.code === '0A000' && /cached plan must not change result type/.test(e.message ?? '');
}

/** pg.Client with its overloaded `query` seen as one signature, so a subclass can wrap it. */
const Client = pg.Client as unknown as new (
  config?: string | pg.ClientConfig,
) => { query(...args: unknown[]): unknown; connection: NodeJS.EventEmitter };

/** A pg.Client class for pg.Pool's `Client` option whose statements run named (see above). */
export function preparingClient(): typeof pg.Client {
  const names = new StatementNames();
  class PreparingClient extends Client {
    /** The server's transaction status after the last statement: I (idle), T (in one) or E (failed one). */
    private transactionStatus = 'I';
    /** The result columns of each statement name run on this connection (described-once.ts). */
    private descriptions = new Map<string, Description>();

    constructor(config?: string | pg.ClientConfig) {
      super(config);
      this.connection.on('readyForQuery', (message: { status: string }) => {
        this.transactionStatus = message.status;
      });
    }

    // Kysely calls query(text, values) and awaits the promise; any other form (a callback, a
    // cursor, a config object) passes through as it is.
    override query(...args: unknown[]): unknown {
      const [text, values] = args;
      if (args.length !== 2 || typeof text !== 'string' || !Array.isArray(values) || values.length === 0) return super.query(...args);
      const name = names.nameOf(text);
      return name === undefined ? super.query(text, values) : this.queryNamed(name, text, values);
    }

    /** The name `text` runs under, or undefined while it runs unnamed (a group commit names its statements with it). */
    statementName(text: string): string | undefined {
      return names.nameOf(text);
    }

    /**
     * For a caller that ran named statements itself (a pipeline: pipeline.ts): after `err`, a
     * stale plan, every name starts afresh, as queryNamed does for its own statements.
     */
    forgetNamesIfStale(err: unknown): void {
      if (!isStalePlan(err)) return;
      names.startNewGeneration();
      this.descriptions.clear();
    }

    private async queryNamed(name: string, text: string, values: unknown[]): Promise<unknown> {
      try {
        return await this.submitNamed(name, text, values);
      } catch (err) {
        if (!isStalePlan(err)) throw err;
        names.startNewGeneration();
        this.descriptions.clear();
        if (this.transactionStatus !== 'I') throw err;
        return super.query(text, values);
      }
    }

    /**
     * `query({ name, text, values })` as pg runs it, without its copy of the config object: pg
     * clones an object config per statement through its property descriptors (2–5 µs, the
     * largest single cost of a statement in pg's own code in the profiles), but takes a Query
     * as it is. The Query is made from the text (pg's fast path) and named after; its promise
     * is made as pg makes its own (an error's stack made to lead back here).
     */
    private submitNamed(name: string, text: string, values: unknown[]): Promise<unknown> {
      const descriptions = this.descriptions;
      const query = describedOnce(descriptions, name, text, values);
      const done = new Promise((resolve, reject) => {
        let settled = false;
        query.callback = (err, res) => {
          // pg calls back twice when a parameter cannot be written: the error, then "done" at
          // the ReadyForQuery of its Sync, with no columns. Only the first call counts.
          if (settled) return;
          settled = true;
          if (err) return reject(err);
          rememberDescription(descriptions, name, query);
          resolve(res);
        };
      });
      super.query(query);
      return done.catch((err: Error) => {
        Error.captureStackTrace(err);
        throw err;
      });
    }
  }
  return PreparingClient as unknown as typeof pg.Client;
}
