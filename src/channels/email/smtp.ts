import { join } from 'node:path';
import type { NodemailerError } from 'nodemailer';
import type { Logger } from 'pino';
import type { Config } from '../../config.js';
import { AcceptanceJournal } from '../../db/acceptance-journal.js';
import type { RenderedEmail } from '../../rendering/email.js';
import { DeliveryError, type DeliveryReceipt, type DeliveryRequest, type Transport } from '../channel.js';
import { buildMime } from './mime.js';
import { renderEmailOf } from './render-request.js';
import { SmtpLoopPool, SmtpThreadPool } from './smtp-pool.js';

/**
 * Pool settings besides its size (SMTP_POOL_SIZE, config.ts). A connection is replaced after 1,000 messages rather than nodemailer's 100, since
 * reconnecting costs a TCP (and TLS) handshake each time. The timeouts are much shorter than
 * nodemailer's defaults (2 min connect, 10 min idle socket) so a dead server turns into a
 * temporary failure well within a dispatcher lease.
 */
const POOL = {
  pool: true,
  maxMessages: 1000,
  connectionTimeout: 10_000,
  greetingTimeout: 10_000,
  socketTimeout: 60_000,
} as const;

/** The pooled transport's options: SMTP_URL (whose query can still set nodemailer options) and the pool size. */
export function smtpPoolOptions(config: Pick<Config, 'smtpUrl' | 'smtpPoolSize'>) {
  return { url: config.smtpUrl, ...POOL, maxConnections: config.smtpPoolSize };
}

/** Error codes of a connection that failed, not of a message that was refused: worth a retry. */
const NETWORK_CODES = new Set([
  'ECONNECTION',
  'ETIMEDOUT',
  'ESOCKET',
  'EDNS',
  'ETLS',
  'EPROXY',
  'EMAXLIMIT',
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/**
 * Email over SMTP through one pooled nodemailer transport (smtp:// or smtps:// from SMTP_URL),
 * on a thread of its own or on this one (SMTP_THREAD; smtp-pool.ts). The URL carries
 * credentials: it is handed to nodemailer and never logged.
 */
export function createSmtpTransport(
  config: Pick<Config, 'smtpUrl' | 'smtpPoolSize' | 'smtpThread' | 'publicUrl' | 'secret' | 'databaseUrl' | 'dataDir'>,
  logger: Logger,
): Transport {
  if (!config.smtpUrl) throw new Error('SMTP_URL is not set');
  if (config.smtpThread) return smtpTransportOn(new SmtpThreadPool(smtpPoolOptions(config), openJournal(config, logger)), config, logger);
  return smtpTransportOn(new SmtpLoopPool(smtpPoolOptions(config)), config, logger);
}

/**
 * The thread's acceptance journal (db/acceptance-journal.ts) on SQLite only: a file next to
 * herald.db, which every process that claims from that database can read. PostgreSQL's
 * workers may run on other machines, where a local file is out of sight of the claim that
 * takes a dead worker's sends: there the thread holds one message per connection (smtp-pool.ts).
 */
export function journalPathOf(config: Pick<Config, 'databaseUrl' | 'dataDir'>): string | undefined {
  return config.databaseUrl ? undefined : join(config.dataDir, 'smtp-accepted.db');
}

/** The journal, or none when its file cannot be opened: then the thread holds one message per connection, as on PostgreSQL. */
function openJournal(config: Pick<Config, 'databaseUrl' | 'dataDir'>, logger: Logger): AcceptanceJournal | undefined {
  const path = journalPathOf(config);
  if (path === undefined) return undefined;
  try {
    return new AcceptanceJournal(path);
  } catch (err) {
    logger.error({ err, path }, 'the SMTP acceptance journal cannot be opened: the SMTP thread holds one message per connection');
    return undefined;
  }
}

function smtpTransportOn(pool: SmtpLoopPool | SmtpThreadPool, config: Pick<Config, 'publicUrl' | 'secret'>, logger: Logger): Transport {
  const journaled = pool instanceof SmtpThreadPool ? pool : undefined;
  return {
    async deliver(request: DeliveryRequest): Promise<DeliveryReceipt> {
      const email = await renderEmailOf(config, request);
      try {
        // Built here in one go: the same message nodemailer would build from the parts, at a
        // third of the CPU and in one socket write (mime.ts), handed straight to the pool (pool-send.ts; smtp-pool.ts).
        const info = await pool.send(buildMime(toMailOptions(email)), email.messageId, request.send.id);
        logger.debug({ sendId: request.send.id, messageId: email.messageId }, 'email accepted by smtp server');
        return { providerMessageId: email.messageId, delivered: info.accepted.length > 0 };
      } catch (err) {
        throw smtpFailure(err as NodemailerError);
      }
    },
    async close() {
      await pool.close();
    },
    ...(journaled && {
      deliveredBefore: (sendIds) => {
        const receipts = new Map<string, DeliveryReceipt & { to: string }>();
        for (const [id, { to, messageId, delivered }] of journaled.deliveredAmong(sendIds)) {
          receipts.set(id, { to, providerMessageId: messageId, delivered });
        }
        return receipts;
      },
      recorded: (sendId) => journaled.recorded(sendId),
    }),
  };
}

function toMailOptions(email: RenderedEmail) {
  return {
    from: email.from,
    to: email.to,
    subject: email.subject,
    text: email.text,
    ...(email.html === null ? {} : { html: email.html }),
    messageId: email.messageId,
    headers: email.headers,
  };
}

/**
 * SMTP reply classes (RFC 5321): 4yz is transient, 5yz permanent, except 503 (bad sequence of
 * commands), a session problem that a new connection does not have. No reply at all means the
 * server was not reached: temporary. So is a rejected login: the operator fixes SMTP_URL and
 * the queued sends go out, instead of every send failing for good meanwhile.
 */
export function smtpFailure(err: NodemailerError): DeliveryError {
  const code = err.code ?? '';
  const reply = err.responseCode;
  const detail = (err.response ?? err.message ?? 'unknown error').split('\n')[0]!.trim();
  if (code === 'EAUTH' || code === 'ENOAUTH') return new DeliveryError(`smtp login failed: ${detail}`, true);
  if (typeof reply === 'number') {
    const permanent = reply >= 500 && reply < 600 && reply !== 503;
    // A 5yz to RCPT TO refuses the address (a bounce); to DATA it refuses this message only.
    const addressRefused = permanent && err.command === 'RCPT TO';
    return new DeliveryError(`smtp ${reply}: ${stripCode(detail, reply)}`, !permanent, addressRefused);
  }
  if (NETWORK_CODES.has(code) || (err.originalCode !== undefined && NETWORK_CODES.has(err.originalCode))) {
    return new DeliveryError(`smtp server unreachable (${err.originalCode ?? code}): ${detail}`, true);
  }
  // Refused before reaching the server (an address nodemailer cannot use): the same every time.
  if (code === 'EENVELOPE' || code === 'EMAXRECIPIENTS' || code === 'EMESSAGE') return new DeliveryError(`smtp: ${detail}`, false);
  return new DeliveryError(`smtp: ${detail}`, true);
}

function stripCode(detail: string, reply: number): string {
  return detail.startsWith(String(reply)) ? detail.slice(3).trim() : detail;
}
