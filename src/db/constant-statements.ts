import { CompiledQuery, type Expression, type Kysely, PostgresAdapter, type QueryResult, sql } from 'kysely';
import { ClockCache } from '../lru.js';
import type { Database } from './schema.js';

/*
 * Hot statements without a per-call build and compile (issue 12, SQLite's CPU per request).
 *
 * A `sql` template or a query builder builds a tree of frozen nodes on every call and compiles
 * it to a new string, which the SQLite statement cache (connect.ts) then hashes in full to find
 * the prepared statement: measured ~2 µs (a short `sql` insert) to ~5 µs (a builder insert) and
 * ~8 µs (the trigger's read) per statement on top of SQLite's own work, in a request of ~250 µs.
 * The texts here are built ONCE and run through Kysely (`executeQuery`), so the statements keep
 * the one query layer, its connection handling and its transactions; a constant string keeps
 * its hash, so the statement cache finds it in one cheap lookup, and PostgreSQL's prepared
 * statements (prepared-statements.ts) see the same text too.
 */

type Handle = Kysely<Database>;

/** True when the handle runs on PostgreSQL (the placeholders and a few functions differ). */
export const onPostgres = (q: Handle): boolean => q.getExecutor().adapter instanceof PostgresAdapter;

/**
 * A statement whose text never changes, written with `?` placeholders (SQLite's); PostgreSQL
 * runs the same text with them numbered ($1, $2, ...) unless it needs a text of its own. The
 * text holds no `?` other than its placeholders.
 */
export function constantStatement<R = unknown>(
  sqliteText: string,
  postgresText = numberedPlaceholders(sqliteText),
): (q: Handle, parameters: readonly unknown[]) => Promise<QueryResult<R>> {
  return (q, parameters) =>
    q.executeQuery(CompiledQuery.raw(onPostgres(q) ? postgresText : sqliteText, parameters as unknown[])) as Promise<QueryResult<R>>;
}

function numberedPlaceholders(text: string): string {
  let n = 0;
  return text.replace(/\?/g, () => `$${++n}`);
}

/**
 * Where a statement's SQL takes the values of a call from: by name (`bind('email')`), by name
 * and position in a list (`bind('fieldKeys', 2)`), or by a path into a group of values
 * (`bind('send.id')`: `values.send.id`, bindIn). The SQL is written once against named slots
 * and compiled once per shape (StatementShapes).
 */
export type Bind = (name: string, index?: number) => unknown;

export type BindValues = Readonly<Record<string, unknown>>;

/**
 * `bind` for the values of one group of the call's (`values[group]`): one SQL definition used
 * twice in a statement, or beside a caller's own values, each with values of its own. The
 * group is an object the call already has or builds once: nothing is copied per call.
 */
export const bindIn =
  (bind: Bind, group: string): Bind =>
  (name, index) =>
    bind(`${group}.${name}`, index);

/** A call's value in a compiled shape: Kysely keeps it as the parameter it stands for. */
class Slot {
  /** The name's path into the call's values (`a.b`: values.a.b), split once, when the shape is compiled. */
  readonly path: readonly string[];
  constructor(
    readonly name: string,
    readonly index: number | undefined,
  ) {
    this.path = name.split('.');
  }
}

const bindSlots: Bind = (name, index) => new Slot(name, index);

/** A shape's text, and its parameters: a Slot (the call's value) or a constant of the SQL. */
interface CompiledShape {
  sql: string;
  parameters: readonly unknown[];
}

/** What a shape is built as: a `sql` template, or a query builder of `q`'s (compiled by its own Kysely). */
export interface Compilable<R> {
  compile(q: Handle): CompiledQuery<R>;
}

/** Shapes kept per family and engine (a text per combination of what a call sends). */
const SHAPES_KEPT = 200;

/**
 * A family of statements whose text depends on a few facts of the call only (which identifiers
 * a lead sends, how many field keys it names): each shape is built from the one definition of
 * its SQL (`build`, with slots for the values) and compiled ONCE per engine; a call then only
 * looks its shape up and puts its values in the parameters' places.
 *
 * `shape` must name every fact that `build` decides the text on (the presence of a value, the
 * length of a list); a value missing from `values` fails the call rather than run other SQL.
 */
export class StatementShapes {
  private readonly sqlite = new ClockCache<string, CompiledShape>(SHAPES_KEPT);
  private readonly postgres = new ClockCache<string, CompiledShape>(SHAPES_KEPT);

  async run<R>(q: Handle, shape: string, values: BindValues, build: (bind: Bind) => Compilable<R>): Promise<QueryResult<R>> {
    return q.executeQuery(this.compile(q, shape, values, build));
  }

  /** The statement `run` would run, not run: for a caller that sends several at once (db/pipeline.ts). */
  compile<R>(q: Handle, shape: string, values: BindValues, build: (bind: Bind) => Compilable<R>): CompiledQuery<R> {
    const compiled = (onPostgres(q) ? this.postgres : this.sqlite).get(shape, () => {
      const { sql, parameters } = build(bindSlots).compile(q);
      return { sql, parameters };
    });
    const parameters = compiled.parameters.map((p) => (p instanceof Slot ? slotValue(values, p, shape) : p));
    return CompiledQuery.raw(compiled.sql, parameters) as CompiledQuery<R>;
  }
}

function slotValue(values: BindValues, slot: Slot, shape: string): unknown {
  let value: unknown = values;
  for (const key of slot.path) value = (value as BindValues | undefined)?.[key];
  if (slot.index !== undefined) value = (value as readonly unknown[] | undefined)?.[slot.index];
  if (value === undefined)
    throw new Error(`no value for ${slot.name}${slot.index === undefined ? '' : `[${slot.index}]`} (shape ${shape})`);
  return value;
}

/**
 * A list given as ONE parameter holding a JSON array (of strings), read as a subquery: a
 * statement compiled once (StatementShapes) serves a list of any length, where an IN list of
 * placeholders would make a text per length.
 */
export function jsonListIn(q: Handle, list: unknown): Expression<string> {
  return onPostgres(q)
    ? sql<string>`(select value from json_array_elements_text(cast(${list} as json)) as t(value))`
    : sql<string>`(select value from json_each(${list}))`;
}
