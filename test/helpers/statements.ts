import pg from 'pg';

/**
 * Records the statements this process sends to PostgreSQL (each one a round trip with `pg`,
 * which does not pipeline), by wrapping every client's `query`: the round-trip tests of issue 12.
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
    const text = typeof args[0] === 'string' ? args[0] : (args[0] as { text?: string }).text;
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
