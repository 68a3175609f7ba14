import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { loadConfig } from './config.js';
import { type Herald, type Role, startHerald } from './herald.js';
import { createLogger } from './http/logger.js';
import { hintFirstAdministrator } from './modules/admin/first-start.js';
import { describeDatabase, describeMail, describeStartup } from './ops/startup-line.js';
import { VERSION } from './version.js';

/** Hard stop if a graceful one hangs past the 10 s that in-flight requests and sends get. */
const SHUTDOWN_DEADLINE_MS = 12_000;

/**
 * Runs Herald in this process until SIGTERM/SIGINT (`npm start`, `herald serve`). The process
 * that gets the signal must be this node process: `npm start` execs node (package.json) so
 * npm's forwarded signal reaches it, and the production command and the container start node
 * directly (README, Running in production).
 */
export async function runHerald(role: Role): Promise<void> {
  const config = loadConfig();
  const logger = createLogger(config.logLevel);

  let herald: Herald | undefined;
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
    await herald?.close();
    logger.info('herald stopped');
    process.exit(0);
  };
  // Listening before the start: a signal during it (migrations, opening the database) waits for
  // the start to finish and then stops cleanly, instead of killing the process mid-way or, as
  // PID 1 in a container without an init, being ignored.
  let signalled: string | undefined;
  const onSignal = (signal: string) => {
    if (herald) void stop(signal);
    else signalled ??= signal;
  };
  process.on('SIGTERM', () => onSignal('SIGTERM'));
  process.on('SIGINT', () => onSignal('SIGINT'));

  herald = await startHerald({ config, logger, role, listen: true });
  const listening = role === 'worker' ? undefined : addressOf(herald.app, config.host);
  const metricsPort = config.metricsPort === undefined ? undefined : addressOf(herald.metricsApp, config.host)?.port;
  logger.info(
    {
      role,
      engine: herald.db.engine,
      port: listening?.port,
      metricsPort,
      publicUrl: config.publicUrl,
      database: describeDatabase(config),
      mail: role === 'api' ? undefined : describeMail(config),
    },
    describeStartup(config, { version: VERSION, role, listening, metricsPort }),
  );
  if (role === 'worker' && config.metricsPort === undefined)
    logger.info('no METRICS_PORT: this worker serves no /metrics, /healthz or /readyz');
  if (signalled) return stop(signalled);
  if (role !== 'worker') await hintFirstAdministrator(herald.db, logger, `${config.publicUrl}/admin`);
}

/** The port the server really listens on (PORT=0 asks the system for a free one). */
function addressOf(app: FastifyInstance | undefined, host: string): { host: string; port: number } | undefined {
  const address = app?.server.address() as AddressInfo | null | undefined;
  return address ? { host, port: address.port } : undefined;
}
