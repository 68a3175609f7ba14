import nodemailer, { type Transporter } from 'nodemailer';
import MailComposer from 'nodemailer/lib/mail-composer';
import { smtpPoolOptions } from '../../src/channels/email/smtp.js';
import type { Config } from '../../src/config.js';
import type { Db } from '../../src/db/connect.js';
import { findCampaign } from '../../src/modules/campaigns/campaigns.service.js';
import { getContactProfile } from '../../src/modules/contacts/contacts.service.js';
import { emailTracking } from '../../src/modules/tracking/email-links.js';
import { unsubscribeUrl } from '../../src/modules/unsubscribe/unsubscribe-token.js';
import { renderEmail } from '../../src/rendering/email.js';
import type { Fixtures } from '../fixtures.js';
import { percentile } from './dispatch.js';

/** Herald's dispatcher keeps this many sends in flight (its default concurrency). */
export const IN_FLIGHT = 32;

export interface BuiltMessage {
  envelope: { from: string; to: string[] };
  raw: Buffer;
}

export interface CeilingResult {
  perSecond: number;
  /** Time from sendMail to the server's acceptance, ms: mostly the wait for a free connection. */
  p50: number;
  p99: number;
  cpuMsPerMessage: number;
}

/**
 * One of the burst's messages, rendered by Herald's own code and turned into MIME once: the
 * ceiling sends these bytes over and over, so what it measures is the SMTP pool and the sink.
 */
export async function buildMessage(db: Db, config: Config, fixtures: Fixtures): Promise<BuiltMessage> {
  const campaign = await findCampaign(db.kysely, fixtures.accountId, fixtures.immediateCampaignId);
  const contact = await getContactProfile(db.kysely, fixtures.accountId, { id: fixtures.contactIds[0]! });
  if (!campaign || !contact) throw new Error('ceiling: the bench campaign or contact is missing');
  const sendId = 'snd_ceiling';
  const email = await renderEmail({
    campaign,
    contact,
    to: contact.emails[0]!,
    sendId,
    unsubscribeUrl: unsubscribeUrl(config, sendId),
    tracking: emailTracking(config, sendId),
  });
  const mime = new MailComposer({ ...email, html: email.html ?? undefined }).compile();
  const { from, to } = mime.getEnvelope();
  return { envelope: { from: from || '', to }, raw: await mime.build() };
}

/**
 * The ceiling: a bare nodemailer pool (Herald's pool options from the same config: SMTP_URL and
 * SMTP_POOL_SIZE, so the same number of connections) sending `count` copies of an already-built message, `IN_FLIGHT` at a
 * time, as fast as the sink takes them. Nothing is read or written besides the SMTP traffic.
 */
export async function benchCeiling(
  config: Pick<Config, 'smtpUrl' | 'smtpPoolSize'>,
  message: BuiltMessage,
  count: number,
): Promise<CeilingResult> {
  const transport = nodemailer.createTransport(smtpPoolOptions(config));
  try {
    // Unmeasured: opens the pool's connections.
    await sendAll(transport, message, IN_FLIGHT);
    const cpu = process.cpuUsage();
    const started = performance.now();
    const latencies = await sendAll(transport, message, count);
    const seconds = (performance.now() - started) / 1000;
    const used = process.cpuUsage(cpu);
    latencies.sort((a, b) => a - b);
    return {
      perSecond: count / seconds,
      p50: percentile(latencies, 50),
      p99: percentile(latencies, 99),
      cpuMsPerMessage: (used.user + used.system) / 1000 / count,
    };
  } finally {
    transport.close();
  }
}

/** Sends `count` copies, IN_FLIGHT at a time; returns each one's time to the server's acceptance, ms. */
async function sendAll(transport: Transporter, message: BuiltMessage, count: number): Promise<number[]> {
  const latencies: number[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (next++ < count) {
        const sentAt = performance.now();
        await transport.sendMail(message);
        latencies.push(performance.now() - sentAt);
      }
    }),
  );
  return latencies;
}
