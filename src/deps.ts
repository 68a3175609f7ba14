import type { Logger } from 'pino';
import type { Config } from './config.js';
import type { Db } from './db/connect.js';
import type { LoopHealth } from './ops/health.js';
import type { HeraldMetrics } from './ops/metrics.js';

/** What every route plugin of the app is built from (buildApp's argument). */
export interface AppDeps {
  config: Config;
  db: Db;
  logger?: Logger;
  /** Wakes the dispatcher when a trigger queues a send (absent: the dispatcher polls). */
  wakeup?: (dueAt: number) => void;
  /** This process's metrics (absent: the app keeps its own, as in tests of the API alone). */
  metrics?: HeraldMetrics;
  /** The dispatcher running in this process, for /readyz. */
  dispatcher?: LoopHealth;
}
