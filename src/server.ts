import { loadConfig } from './config.js';
import { type Role, startHerald } from './herald.js';
import { createLogger } from './http/logger.js';
import { hintFirstAdministrator } from './modules/admin/first-start.js';

/** Hard stop if a graceful one hangs past the 10 s that in-flight requests and sends get. */
const SHUTDOWN_DEADLINE_MS = 12_000;

/** Runs Herald in this process until SIGTERM/SIGINT (`npm start`, `herald serve`). */
export async function runHerald(role: Role): Promise<void> {
  const config = loadConfig();
  const logger = createLogger(config.logLevel);
  const herald = await startHerald({ config, logger, role, listen: true });
  logger.info(
    {
      role,
      engine: herald.db.engine,
      port: role === 'worker' ? undefined : config.port,
      metricsPort: config.metricsPort,
      publicUrl: config.publicUrl,
    },
    'herald started',
  );
  if (role === 'worker' && config.metricsPort === undefined)
    logger.info('no METRICS_PORT: this worker serves no /metrics, /healthz or /readyz');
  if (role !== 'worker') await hintFirstAdministrator(herald.db, logger, `${config.publicUrl}/admin`);

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'herald stopping');
    setTimeout(() => {
      logger.warn('graceful stop took too long, exiting');
      process.exit(1);
    }, SHUTDOWN_DEADLINE_MS).unref();
    // Every write is one transaction, and a send interrupted past the grace period keeps its
    // lease and is retried by the next worker: nothing is left half-written.
    await herald.close();
    logger.info('herald stopped');
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}
