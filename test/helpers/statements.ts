import pg from 'pg';
import { StatementGroup } from '../../src/db/statement-group.js';

/**
 * Records the statements this process sends to PostgreSQL, one entry per round trip (a
 * pipeline of statements is one), by wrapping every client's `query`: the round-trip tests of issue 12.
 */
export interface StatementRecorder {
  /** What `run` returns, and the statements it sent, in order. */
  during<T>(run: () => Promise<T>): Promise<{ result: T; statements: string[] }>;
  /** Puts the driver's own `query` back. */
  restore(): void;
}

export function recordStatements(): StatementRecorder {
  const query = pg.Client.prototype.query;
  let statements: string[] | undefined;
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    // A pipeline (a group commit's, a batch's: db/statement-group.ts) is one round trip: one entry.
    const text =
      args[0] instanceof StatementGroup
        ? `pipeline of ${args[0].statements.length}: ${args[0].statements.map((s) => s.text).join(' ;; ')}`
        : typeof args[0] === 'string'
          ? args[0]
          : (args[0] as { text?: string }).text;
    statements?.push(String(text));
    return (query as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof query;
  return {
    async during(run) {
      const sent: string[] = [];
      statements = sent;
      try {
        return { result: await run(), statements: sent };
      } finally {
        statements = undefined;
      }
    },
    restore() {
      pg.Client.prototype.query = query;
    },
  };
}

/** The statements of recorded round trips one by one: a pipeline's in the order it sent them. */
export function eachStatement(sent: readonly string[]): string[] {
  return sent.flatMap((text) => {
    const pipeline = /^pipeline of \d+: /.exec(text);
    return pipeline ? text.slice(pipeline[0].length).split(' ;; ') : [text];
  });
}
