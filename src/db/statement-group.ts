import pg from 'pg';

// A group of statements sent to PostgreSQL in one write and run as ONE transaction: the
// protocol's implicit transaction (every Parse/Bind/Execute before a single Sync). Inside a
// transaction already begun (pipeline.ts) they run in it instead: the Sync ends nothing, and
// after an error the statements before it stand and the transaction is failed until a
// rollback (to a savepoint). Used by postgres-group-commit.ts and pipeline.ts. It is a pg "submittable" (what pg-cursor is), so it relies on the message
// handlers pg's Client calls on its active query (pinned pg 8.x, lib/client.js and
// lib/query.js); test/db/postgres-group-commit.test.ts covers it, and a pg upgrade must re-read those files.

/** One statement of a group: its text, its parameters (already prepared, see preparedValues) and its name if it has one. */
export interface GroupedStatement {
  text: string;
  values: unknown[];
  /** A prepared statement's name (prepared-statements.ts), or undefined to send it unnamed. */
  name: string | undefined;
}

/** The parts of pg's Connection (lib/connection.js) a group writes with. */
interface Connection extends NodeJS.EventEmitter {
  stream: { cork(): void; uncork(): void };
  parsedStatements: Record<string, string>;
  parse(message: { text: string; name?: string }): void;
  bind(message: { statement?: string; values: unknown[]; valueMapper: unknown }): void;
  describe(message: { type: 'P'; name: string }): void;
  execute(message: { portal: string }): void;
  sync(): void;
}

interface RowDescription {
  fields: unknown[];
}

/** pg's Result (lib/result.js): the rows of one statement, parsed with the column types. */
interface Result extends pg.QueryResult {
  addFields(fields: unknown[]): void;
  parseRow(fields: unknown[]): unknown;
  addRow(row: unknown): void;
  addCommandComplete(message: unknown): void;
}
const Result = (pg as unknown as { Result: new () => Result }).Result;

/** pg's mapping of a parameter to its wire text (lib/utils.js), as pg.Query uses it. */
const prepareValue = (pg as unknown as { utils: { prepareValue(value: unknown): unknown } }).utils.prepareValue;

/**
 * A statement's parameters as they go on the wire. Mapping them before the group is written
 * keeps a value that cannot be sent (a cyclic object) from failing the group half-written:
 * it fails its own statement's caller, and binding the mapped values cannot throw.
 */
export function preparedValues(values: readonly unknown[]): unknown[] {
  return values.map(prepareValue);
}

/**
 * The statements of one group, written at once (submit) and answered in order: each statement's
 * CommandComplete closes its result. The callback gets every result once the Sync's
 * ReadyForQuery says the group is over (its implicit transaction committed), or the first error
 * (the server skips the rest; the implicit transaction is rolled back at the Sync; or the
 * connection was lost).
 */
export class StatementGroup {
  /** For pg's Client, which hands a submittable's outcome to this callback. */
  callback: ((err: Error | null, results?: pg.QueryResult[]) => void) | undefined;
  private readonly results: Result[] = [];
  private current: Result | undefined;
  /** Names this group parses, in order, and how many the server has confirmed (ParseComplete). */
  private readonly parsing: GroupedStatement[] = [];
  private parsed = 0;
  private connection: Connection | undefined;
  private readonly onParseComplete = () => {
    const statement = this.parsing[this.parsed++];
    if (statement?.name !== undefined && this.connection) this.connection.parsedStatements[statement.name] = statement.text;
  };

  constructor(readonly statements: readonly GroupedStatement[]) {}

  submit(connection: Connection): null {
    this.connection = connection;
    // pg's Client notes a parsed name only for a query that has one; a group keeps its own
    // count, so a name the server has prepared is never parsed again on this connection (which
    // the server would refuse), even when a later statement of the group failed.
    connection.on('parseComplete', this.onParseComplete);
    connection.stream.cork();
    try {
      const parsingNames = new Set<string>();
      for (const statement of this.statements) {
        const { name } = statement;
        if (name === undefined || (connection.parsedStatements[name] === undefined && !parsingNames.has(name))) {
          connection.parse({ text: statement.text, name });
          this.parsing.push(statement);
          if (name !== undefined) parsingNames.add(name);
        }
        connection.bind({ statement: name, values: statement.values, valueMapper: prepareValue });
        connection.describe({ type: 'P', name: '' });
        connection.execute({ portal: '' });
      }
      connection.sync();
    } finally {
      connection.stream.uncork();
    }
    return null;
  }

  handleRowDescription(message: RowDescription): void {
    this.current = new Result();
    this.current.addFields(message.fields);
  }

  handleDataRow(message: RowDescription): void {
    this.current?.addRow(this.current.parseRow(message.fields));
  }

  handleCommandComplete(message: unknown): void {
    const result = this.current ?? new Result();
    result.addCommandComplete(message);
    this.results.push(result);
    this.current = undefined;
  }

  handleEmptyQuery(): void {
    this.results.push(new Result());
  }

  /**
   * A server error (the server skips the rest of the group up to its Sync) or a lost connection.
   * The error says which statement failed (`statementIndex`: the statements before it completed).
   */
  handleError(err: Error): void {
    (err as Error & { statementIndex?: number }).statementIndex = this.results.length;
    this.finish(err);
  }

  handleReadyForQuery(): void {
    if (this.results.length !== this.statements.length) {
      this.finish(new Error(`a statement group of ${this.statements.length} got ${this.results.length} results`));
      return;
    }
    this.finish(null);
  }

  handlePortalSuspended(): void {}
  handleCopyInResponse(): void {}
  handleCopyData(): void {}

  private finish(err: Error | null): void {
    this.connection?.off('parseComplete', this.onParseComplete);
    const callback = this.callback;
    this.callback = undefined;
    callback?.(err, err ? undefined : this.results);
  }
}

/** Sends `statements` as one group on `client`: their results in order, or the group's error. */
export function submitGroup(client: pg.PoolClient, statements: readonly GroupedStatement[]): Promise<pg.QueryResult[]> {
  return new Promise((resolve, reject) => {
    const group = new StatementGroup(statements);
    group.callback = (err, results) => (err ? reject(err) : resolve(results!));
    (client as unknown as { query(submittable: StatementGroup): void }).query(group);
  });
}

/**
 * True for an error the server answered inside the group's transaction: a statement refused,
 * after which the server discards the rest up to the Sync and rolls the group's implicit
 * transaction back, and the connection still works. A lost connection, a FATAL error (a
 * shutdown: class 57P, a connection failure: 08) or an internal or system one (XX, 58) leaves
 * the outcome unknown. The severity is in the server's own language; the codes are not.
 */
export function refusedByServer(err: unknown): boolean {
  if (!(err instanceof pg.DatabaseError)) return false;
  return !/^(08|57P|58|XX)/.test(err.code ?? '') && err.severity !== 'FATAL' && err.severity !== 'PANIC';
}
