import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { buildApp, buildOpsApp } from './app.js';
import { CHANNEL_REGISTRY } from './channels/registry.js';
import { type Channels, createChannels } from './channels/transports.js';
import type { Config } from './config.js';
import { type Db, openDatabase } from './db/connect.js';
import { Dispatcher, type DispatcherOptions, SENDS_WAKEUP_CHANNEL } from './dispatcher/dispatcher.js';
import { type Listener, listenThroughDatabase, notifyThroughDatabase, WAKEABLE_WORKER_IDLE_POLL_MS } from './jobs/wakeup.js';
import type { Campaign } from './modules/campaigns/campaign.js';
import { HeraldMetrics } from './ops/metrics.js';
import { VERSION } from './version.js';
import { enqueueWebhookDeliveries } from './webhooks/enqueue.js';
import { WebhookWorker } from './webhooks/worker.js';

/** `api` serves HTTP, `worker` delivers sends and webhooks, `all` (npm start) does both. */
export type Role = 'api' | 'worker' | 'all';
export const ROLES: readonly Role[] = ['api', 'worker', 'all'];

export interface Herald {
  db: Db;
  app?: FastifyInstance;
  dispatcher?: Dispatcher;
  webhooks?: WebhookWorker;
  metrics: HeraldMetrics;
  /**
   * The HTTP server that answers /metrics: `app`, or the probes-and-metrics server of
   * METRICS_PORT (a worker's only one). Undefined for a worker without METRICS_PORT.
   */
  metricsApp?: FastifyInstance;
  /** Stops taking requests, lets in-flight requests and sends finish (10 s at most), closes the database. */
  close(): Promise<void>;
}

export interface HeraldOptions {
  config: Config;
  logger: Logger;
  role: Role;
  /** Listen on config.port/host (false: tests use app.inject()). */
  listen?: boolean;
  /** Dispatcher tuning for tests (a short lease to see a crashed worker's sends retried). */
  dispatcher?: { leaseMs?: number; concurrency?: number; stalledAfterMs?: number };
}

/** Campaigns whose channel has webhooks (email) and that have URLs queue one delivery per URL when a send goes out. */
const queuesWebhooks = (campaign: Campaign) => CHANNEL_REGISTRY[campaign.channel].webhooks && campaign.webhooks.length > 0;

/** The dispatcher's sentInTx: a send of a campaign with webhooks queues one delivery per URL in its outcome's transaction. */
export const queueWebhooksOfSent: NonNullable<DispatcherOptions['sentInTx']> = ({ send, campaign, contact, now }) =>
  queuesWebhooks(campaign)
    ? (tx) =>
        enqueueWebhookDeliveries(tx, {
          accountId: send.account_id,
          campaignId: campaign.id,
          sendId: send.id,
          urls: campaign.webhooks,
          contact,
          trigger: send.triggerData,
          now,
        })
    : undefined;

/** Assembles one Herald process for its role. */
export async function startHerald(options: HeraldOptions): Promise<Herald> {
  const { config, logger, role } = options;
  const db = await openDatabase(config);
  const worksSends = role !== 'api';
  const servesHttp = role !== 'worker';
  const metrics = new HeraldMetrics(db, { role, version: VERSION });

  let channels: Channels | undefined;
  let webhooks: WebhookWorker | undefined;
  let dispatcher: Dispatcher | undefined;
  let listener: Listener | undefined;
  if (worksSends) {
    channels = createChannels(config, db, logger);
    webhooks = new WebhookWorker({ db, config, logger: logger.child({ component: 'webhooks' }), metrics });
    const worker = webhooks;
    const wakeableFromElsewhere = db.engine === 'postgres' && config.databaseUrl !== undefined;
    dispatcher = new Dispatcher({
      db,
      config,
      logger: logger.child({ component: 'dispatcher' }),
      channels,
      leaseMs: options.dispatcher?.leaseMs ?? config.sendLeaseSeconds * 1000,
      concurrency: options.dispatcher?.concurrency,
      metrics,
      stalledAfterMs: options.dispatcher?.stalledAfterMs,
      // Alone on SQLite nothing can wake us from another process: look often (cheap indexed query).
      idlePollMs: role === 'worker' && !wakeableFromElsewhere ? 200 : WAKEABLE_WORKER_IDLE_POLL_MS,
      sentInTx: queueWebhooksOfSent,
      // Only a send that queued deliveries gives the webhook worker something to do (waking it
      // costs a claim query on every send otherwise).
      afterSent: ({ campaign }) => {
        if (queuesWebhooks(campaign)) worker.notify();
      },
    });
    if (role === 'worker' && wakeableFromElsewhere) {
      const target = dispatcher;
      listener = listenThroughDatabase(config.databaseListenUrl!, SENDS_WAKEUP_CHANNEL, (dueAt) => target.notify(dueAt), logger);
    }
  }

  let app: FastifyInstance | undefined;
  if (servesHttp) {
    const target = dispatcher;
    const wakeup = target
      ? (dueAt: number) => target.notify(dueAt)
      : db.engine === 'postgres'
        ? notifyThroughDatabase(db, SENDS_WAKEUP_CHANNEL, logger)
        : undefined;
    app = await buildApp({ config, db, logger, wakeup, metrics, dispatcher });
    if (options.listen) await app.listen({ port: config.port, host: config.host });
    else await app.ready();
  }

  // METRICS_PORT: probes and /metrics on a port of their own (a worker has no other server).
  let opsApp: FastifyInstance | undefined;
  if (config.metricsPort !== undefined) {
    opsApp = await buildOpsApp({ config, db, logger, metrics, dispatcher });
    if (options.listen) await opsApp.listen({ port: config.metricsPort, host: config.host });
    else await opsApp.ready();
  }

  dispatcher?.start();
  webhooks?.start();

  return {
    db,
    app,
    dispatcher,
    webhooks,
    metrics,
    metricsApp: opsApp ?? app,
    async close() {
      await Promise.all([app?.close(), opsApp?.close()]);
      await Promise.all([dispatcher?.stop(), webhooks?.stop(), listener?.close()]);
      await channels?.close();
      await db.close();
    },
  };
}
