import { mkdir, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import nodemailer from 'nodemailer';
import type { Logger } from '../../core/logger.js';
import { DeliveryError } from './errors.js';

export type MailMessage = {
  /** Becomes the Message-ID (and the .eml file name): the delivery id, the same on every retry. */
  id: string;
  to: string;
  subject: string;
  text: string;
  html: string;
  /** One-click unsubscribe (RFC 2369/8058) for status-change emails. */
  unsubscribeUrl?: string | undefined;
};

export type Mailer = {
  readonly kind: 'smtp' | 'file';
  send(message: MailMessage): Promise<void>;
  close(): void;
};

/**
 * The mail transport of the process, built once (src/runtime/services.ts): SMTP at SMTP_URL, or, without
 * it, a directory of .eml files (DATA_DIR/mail) with one log line per message, so that a service
 * without a mail server loses nothing silently.
 */
export function createMailer(options: {
  smtpUrl: string | undefined;
  from: string;
  /** Domain of Message-IDs. */
  domain: string;
  dataDir: string;
  timeoutMs: number;
  logger: Logger;
}): Mailer {
  const { from, domain, logger } = options;
  const compose = (message: MailMessage) => ({
    from,
    to: message.to,
    subject: message.subject,
    text: message.text,
    html: message.html,
    messageId: `<${message.id}@${domain}>`,
    ...(message.unsubscribeUrl
      ? { list: { unsubscribe: message.unsubscribeUrl }, headers: { 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' } }
      : {}),
  });

  if (options.smtpUrl) {
    // Not pooled: every send has a connection of its own, which the abort below closes.
    const transport = nodemailer.createTransport({
      url: options.smtpUrl,
      connectionTimeout: options.timeoutMs,
      greetingTimeout: options.timeoutMs,
      socketTimeout: options.timeoutMs,
    });
    // The steps are bounded one by one (above), the whole send by this: a server that answers
    // each step just in time cannot hold a delivery past its claim's lease (2 × timeout + 30 s).
    const totalMs = 2 * options.timeoutMs;
    return {
      kind: 'smtp',
      async send(message) {
        try {
          // The abort closes the connection, so when this promise settles the send is over: a
          // send given up on can no longer complete behind the attempt's back (and be repeated by
          // the retry). Only a server that took the message and was cut off before its "250"
          // can still deliver it; the Message-ID (the delivery id) lets receivers drop the repeat.
          await transport.sendMail({ ...compose(message), signal: AbortSignal.timeout(totalMs) });
        } catch (error) {
          const e = error as Error & { responseCode?: number; code?: string };
          if (e.code === 'EABORT' || e.name === 'AbortError')
            throw new DeliveryError(`SMTP: the send took longer than ${totalMs} ms`, false);
          // 5xx from the server is a final "no" (unknown mailbox, refused content); the rest may pass later.
          const permanent = typeof e.responseCode === 'number' && e.responseCode >= 500;
          throw new DeliveryError(`SMTP ${e.responseCode ?? e.code ?? ''}: ${e.message}`.replace(/\s+/g, ' ').trim(), permanent);
        }
      },
      close: () => transport.close(),
    };
  }

  const dir = path.join(options.dataDir, 'mail');
  const transport = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'unix' });
  return {
    kind: 'file',
    async send(message) {
      const info = await transport.sendMail(compose(message));
      await mkdir(dir, { recursive: true });
      const file = path.join(dir, `${message.id}.eml`);
      // Written under a temporary name, then renamed: a reader never sees half a message, and a
      // second send of the same delivery replaces the file instead of adding one.
      await writeFile(`${file}.tmp`, info.message as Buffer);
      await rename(`${file}.tmp`, file);
      logger.info({ file, to: message.to, subject: message.subject }, 'email written to a file (SMTP_URL is unset)');
    },
    close: () => transport.close(),
  };
}
