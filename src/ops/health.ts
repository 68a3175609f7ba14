import type { Db } from '../db/connect.js';
import { appliedMigrations, MIGRATION_NAMES } from '../db/migrate.js';

/** A probe answers within this long: a database that does not answer is as good as down. */
const CHECK_TIMEOUT_MS = 2_000;

export type CheckResult = 'ok' | 'unreachable' | 'not migrated' | 'timeout' | 'stalled' | 'stopped';

/** Something with a loop whose liveness readiness reports (the dispatcher). */
export interface LoopHealth {
  health(now: number): 'ok' | 'stalled' | 'stopped';
}

export interface Readiness {
  ready: boolean;
  checks: { database: CheckResult; dispatcher?: CheckResult };
}

/**
 * Ready: the database answers and has every migration this build knows (a process started
 * against a database that an older build is still migrating, or restored from an old backup,
 * is not), and the dispatcher loop of this process, if it runs one, is not stuck.
 */
export async function checkReadiness(db: Db, dispatcher: LoopHealth | undefined): Promise<Readiness> {
  const database = await withTimeout(checkDatabase(db), CHECK_TIMEOUT_MS, 'timeout');
  const checks: Readiness['checks'] = { database };
  if (dispatcher) checks.dispatcher = dispatcher.health(Date.now());
  return { ready: Object.values(checks).every((c) => c === 'ok'), checks };
}

async function checkDatabase(db: Db): Promise<CheckResult> {
  let applied: Set<string>;
  try {
    applied = await appliedMigrations(db.kysely);
  } catch {
    return 'unreachable';
  }
  return MIGRATION_NAMES.every((name) => applied.has(name)) ? 'ok' : 'not migrated';
}

function withTimeout<T>(work: Promise<T>, ms: number, onTimeout: T): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<T>((resolve) => (timer = setTimeout(() => resolve(onTimeout), ms)));
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}
