import { join } from 'node:path';
import type { Config } from '../config.js';
import type { Role } from '../herald.js';

export interface StartupFacts {
  version: string;
  role: Role;
  /** The HTTP server's real address (PORT=0 picks a free port); undefined for a worker. */
  listening: { host: string; port: number } | undefined;
  /** The real port of METRICS_PORT's server, when there is one. */
  metricsPort: number | undefined;
}

/**
 * The one start-up line an operator reads: where it listens, which database, where mail goes,
 * the roles and the public URL. Built from parsed URLs, never from their text: SMTP_URL and
 * DATABASE_URL carry passwords.
 */
export function describeStartup(config: Config, facts: StartupFacts): string {
  const parts = [`Herald ${facts.version} started`];
  parts.push(facts.listening ? `listening on ${httpUrl(facts.listening.host, facts.listening.port)}` : 'no HTTP server (worker)');
  if (facts.metricsPort !== undefined) parts.push(`metrics on port ${facts.metricsPort}`);
  parts.push(`database ${describeDatabase(config)}`);
  if (facts.role !== 'api') parts.push(`mail ${describeMail(config)}`);
  parts.push(facts.role === 'all' ? 'roles api+worker' : `role ${facts.role}`);
  if (facts.role !== 'worker') parts.push(`admin panel ${config.publicUrl}/admin`);
  parts.push(`public URL ${config.publicUrl}`);
  return parts.join(' · ');
}

function httpUrl(host: string, port: number): string {
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

export function describeDatabase(config: Pick<Config, 'databaseUrl' | 'dataDir'>): string {
  if (!config.databaseUrl) return `SQLite ${join(config.dataDir, 'herald.db')}`;
  const url = new URL(config.databaseUrl);
  // `postgres:///herald?host=/run/postgresql` connects over a socket: no host in the URL.
  const host = url.hostname || url.searchParams.get('host') || 'localhost';
  return `PostgreSQL ${host}${url.port ? `:${url.port}` : ''}${url.pathname || '/'}`;
}

/** SMTP host and port (nodemailer's defaults: 587, or 465 for smtps), or the built-in outbox. */
export function describeMail(config: Pick<Config, 'smtpUrl'>): string {
  if (!config.smtpUrl) return 'outbox (no SMTP_URL: emails are kept in the built-in outbox, nothing is sent)';
  const url = new URL(config.smtpUrl);
  const secure = url.protocol === 'smtps:';
  return `${secure ? 'SMTPS' : 'SMTP'} ${url.hostname}:${url.port || (secure ? 465 : 587)}`;
}
