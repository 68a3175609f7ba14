import { Readable } from 'node:stream';
import type { Transporter } from 'nodemailer';
import type MailMessage from 'nodemailer/lib/mailer/mail-message';
import type SMTPPool from 'nodemailer/lib/smtp-pool';
import type { BuiltMime } from './mime.js';

/**
 * Hands a message already built (mime.ts) straight to the pooled SMTP transport: the call
 * nodemailer's own sendMail ends with, `transporter.send(mail, callback)`, the interface
 * nodemailer's transport plugins implement.
 *
 * sendMail with `raw` would first run its plugin steps, wrap the bytes in a MailComposer and a
 * MIME node (header normalising, address parsing), and read them back through a stream
 * pipeline with its AbortController and LastNewline stage: per message, a tenth of the
 * dispatcher's CPU for bytes that are already final (docs/performance.md, issue 9). The pool
 * reads from the message exactly what it reads from that MIME node: the envelope, the
 * Message-ID and a stream of the bytes (the same bytes: a raw node adds no header, and the
 * message already ends with a line break). A message the pool re-queues after a dropped
 * connection gets a new stream of the same buffer.
 *
 * What the pool answers (the SMTP server's reply, or its error with the same codes) is what
 * sendMail answered.
 */
export function sendBuilt(
  transport: Transporter<SMTPPool.SentMessageInfo>,
  built: BuiltMime,
  messageId: string,
): Promise<SMTPPool.SentMessageInfo> {
  const { envelope, raw } = built;
  const message = {
    // A copy each time: the pool adds per-send fields (DSN) to the envelope it is given.
    getEnvelope: () => ({ from: envelope.from, to: [...envelope.to] }),
    messageId: () => messageId,
    getHeader: (name: string) => (name.toLowerCase() === 'message-id' ? messageId : undefined),
    createReadStream: () =>
      new Readable({
        read() {
          this.push(raw);
          this.push(null);
        },
      }),
  };
  const mail = { data: {}, message } as unknown as MailMessage<SMTPPool.SentMessageInfo>;
  return new Promise((resolve, reject) => {
    transport.transporter.send(mail, (err, info) => (err ? reject(err) : resolve(info as SMTPPool.SentMessageInfo)));
  });
}
