import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import ipaddr from 'ipaddr.js';

/** Everything Herald reads from its environment, parsed once at boot (interfaces.md). */
export interface Config {
  readonly port: number;
  readonly host: string;
  readonly dataDir: string;
  /** postgres://... when set; otherwise the embedded SQLite file in dataDir. */
  readonly databaseUrl: string | undefined;
  /**
   * PostgreSQL: where a worker LISTENs for wake-ups, on a session of its own. DATABASE_LISTEN_URL,
   * else DATABASE_URL; set it to the server itself when DATABASE_URL is a PgBouncer in
   * transaction mode (a LISTEN there would hear nothing).
   */
  readonly databaseListenUrl: string | undefined;
  /** PostgreSQL: connections in the process's pool (the priority and LISTEN connections come on top). */
  readonly databasePoolSize: number;
  /**
   * PostgreSQL: statements that run again are prepared once per connection (db/prepared-statements.ts).
   * DATABASE_PREPARED_STATEMENTS=false for a pooler that cannot keep them (PgBouncer in transaction
   * mode before 1.21 or without max_prepared_statements).
   */
  readonly databasePreparedStatements: boolean;
  /** Master secret: encrypts stored API keys, signs tracking and unsubscribe links. */
  readonly secret: string;
  readonly publicUrl: string;
  readonly smtpUrl: string | undefined;
  /** Pooled SMTP connections of one process (a `maxConnections` in SMTP_URL still wins: nodemailer reads it). */
  readonly smtpPoolSize: number;
  /**
   * The SMTP pool on a thread of its own (channels/email/smtp-pool.ts). Default: on SQLite,
   * where one process does all the sending; not on PostgreSQL, whose worker processes already
   * spread it over the cores (docs/decisions.md, "The SMTP pool on its own thread").
   */
  readonly smtpThread: boolean;
  readonly whatsappApiUrl: string;
  readonly webhookAllowPrivate: boolean;
  readonly rateLimitPerSecond: number;
  readonly rateLimitBurst: number;
  readonly logLevel: string;
  /** How long a claimed send belongs to its worker; after that another worker retries it. */
  readonly sendLeaseSeconds: number;
  /** When set, GET /metrics wants `Authorization: Bearer <token>`. */
  readonly metricsToken: string | undefined;
  /** When set, /metrics (with /healthz and /readyz) is served on this port instead of PORT; a worker listens only there. */
  readonly metricsPort: number | undefined;
  /**
   * Reverse proxies whose `X-Forwarded-For` is believed (addresses, CIDR ranges or `loopback`,
   * `linklocal`, `uniquelocal`); unset: the client address is the socket's peer.
   */
  readonly trustProxy: readonly string[] | undefined;
}

export class ConfigError extends Error {}

/**
 * SMTP connections per process. Five keep a local relay busy with 32 sends in flight
 * (docs/performance.md); more help a remote server with a long round trip, if it allows them.
 */
export const DEFAULT_SMTP_POOL_SIZE = 5;

type Env = Record<string, string | undefined>;

/**
 * PostgreSQL connections per process. Ten keep an API process's requests from queueing at 10
 * concurrent clients (each request holds a connection for one or two statements, issue 12);
 * PostgreSQL's default max_connections (100) fits about eight processes.
 */
export const DEFAULT_DATABASE_POOL_SIZE = 10;

/** A postgres:// URL or unset. The message never repeats the value: it may hold a password. */
function postgresUrl(env: Env, name: string): string | undefined {
  const url = env[name] || undefined;
  if (url && !/^postgres(ql)?:\/\//.test(url)) throw new ConfigError(`${name} must start with postgres:// or postgresql://`);
  return url;
}

export function loadConfig(env: Env = process.env): Config {
  const port = intVar(env, 'PORT', 3000, 0, 65535);
  const host = env.HOST || '127.0.0.1';
  const dataDir = resolve(env.DATA_DIR || './data');
  const databaseUrl = postgresUrl(env, 'DATABASE_URL');
  const databaseListenUrl = postgresUrl(env, 'DATABASE_LISTEN_URL');
  if (databaseListenUrl && !databaseUrl) throw new ConfigError('DATABASE_LISTEN_URL needs DATABASE_URL (SQLite has no LISTEN)');
  return Object.freeze({
    port,
    host,
    dataDir,
    databaseUrl,
    databaseListenUrl: databaseListenUrl ?? databaseUrl,
    databasePoolSize: intVar(env, 'DATABASE_POOL_SIZE', DEFAULT_DATABASE_POOL_SIZE, 1, 1000),
    databasePreparedStatements: boolVar(env, 'DATABASE_PREPARED_STATEMENTS', true),
    secret: env.HERALD_SECRET || readOrCreateSecret(dataDir),
    publicUrl: (env.PUBLIC_URL || `http://${host}:${port}`).replace(/\/+$/, ''),
    smtpUrl: smtpUrl(env),
    smtpPoolSize: intVar(env, 'SMTP_POOL_SIZE', DEFAULT_SMTP_POOL_SIZE, 1, 100),
    smtpThread: boolVar(env, 'SMTP_THREAD', databaseUrl === undefined),
    whatsappApiUrl: (env.WHATSAPP_API_URL || 'https://graph.facebook.com/v21.0').replace(/\/+$/, ''),
    webhookAllowPrivate: boolVar(env, 'WEBHOOK_ALLOW_PRIVATE', false),
    rateLimitPerSecond: intVar(env, 'RATE_LIMIT_PER_SECOND', 50, 1, 1_000_000),
    rateLimitBurst: intVar(env, 'RATE_LIMIT_BURST', 100, 1, 1_000_000),
    logLevel: env.LOG_LEVEL || 'info',
    sendLeaseSeconds: intVar(env, 'SEND_LEASE_SECONDS', 120, 1, 86_400),
    metricsToken: metricsToken(env),
    metricsPort: metricsPort(env, port),
    trustProxy: trustProxy(env),
  });
}

/**
 * smtp:// or smtps:// with a host (interfaces.md). Any other URL would start a server that
 * fails every email later, so it is refused at start. The message never repeats the URL: it
 * holds the SMTP password.
 */
function smtpUrl(env: Env): string | undefined {
  const raw = env.SMTP_URL || undefined;
  if (raw === undefined) return undefined;
  const shape = 'smtp://user:pass@host:port or smtps://user:pass@host:port';
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(`SMTP_URL must be a URL like ${shape}`);
  }
  if (url.protocol !== 'smtp:' && url.protocol !== 'smtps:') {
    throw new ConfigError(`SMTP_URL must start with smtp:// or smtps:// (${shape}), got '${url.protocol}//'`);
  }
  if (!url.hostname) throw new ConfigError(`SMTP_URL must name the SMTP server's host (${shape})`);
  return raw;
}

const MIN_METRICS_TOKEN_LENGTH = 16;

function metricsToken(env: Env): string | undefined {
  const token = env.METRICS_TOKEN || undefined;
  if (token !== undefined && (token.length < MIN_METRICS_TOKEN_LENGTH || /\s/.test(token))) {
    throw new ConfigError(`METRICS_TOKEN must be at least ${MIN_METRICS_TOKEN_LENGTH} characters with no spaces`);
  }
  return token;
}

function metricsPort(env: Env, port: number): number | undefined {
  if (env.METRICS_PORT === undefined || env.METRICS_PORT === '') return undefined;
  const value = intVar(env, 'METRICS_PORT', 0, 0, 65535);
  if (value !== 0 && value === port) throw new ConfigError(`METRICS_PORT must differ from PORT (${port})`);
  return value;
}

const PROXY_RANGE_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal']);

/** A list only: trusting every hop (`true`) would let any client choose the address it is throttled by. */
function trustProxy(env: Env): readonly string[] | undefined {
  const raw = env.TRUST_PROXY?.trim();
  if (!raw) return undefined;
  const entries = raw.split(',').map((entry) => entry.trim());
  for (const entry of entries) {
    if (PROXY_RANGE_NAMES.has(entry) || ipaddr.isValid(entry) || isCidr(entry)) continue;
    throw new ConfigError(`TRUST_PROXY must list proxy addresses, CIDR ranges, loopback, linklocal or uniquelocal, got '${entry}'`);
  }
  return Object.freeze(entries);
}

function isCidr(entry: string): boolean {
  try {
    ipaddr.parseCIDR(entry);
    return true;
  } catch {
    return false;
  }
}

/** The generated secret lives beside the database so restarts keep signed links and stored keys valid. */
function readOrCreateSecret(dataDir: string): string {
  const file = join(dataDir, 'secret');
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const secret = randomBytes(32).toString('base64url');
  try {
    writeFileSync(file, `${secret}\n`, { mode: 0o600, flag: 'wx' });
  } catch (err) {
    // Another process (CLI beside the server) created it first: use theirs.
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    return readFileSync(file, 'utf8').trim();
  }
  return secret;
}

function intVar(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ConfigError(`${name} must be a whole number from ${min} to ${max}, got '${raw}'`);
  }
  return value;
}

function boolVar(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (raw === 'true' || raw === '1') return true;
  if (raw === 'false' || raw === '0') return false;
  throw new ConfigError(`${name} must be true or false, got '${raw}'`);
}
