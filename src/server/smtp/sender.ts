// The service's outbound side: a pooled nodemailer transport to the sink (reused connections: the sink
// greets each new connection after a delay), optionally also to a relay.
import nodemailer, { type Transporter } from 'nodemailer';
import type Mail from 'nodemailer/lib/mailer/index.js';

export interface Sender {
  send(message: Mail.Options): Promise<{ messageId: string; response: string }>;
  close(): void;
}

export function createSender(opts: { host: string; port: number; maxConnections?: number } | { url: string }): Sender {
  const transport: Transporter =
    'url' in opts
      ? // A relay (`smtp://` or `smtps://`), pooled as well.
        nodemailer.createTransport(`${opts.url}${opts.url.includes('?') ? '&' : '?'}pool=true`)
      : nodemailer.createTransport({
          host: opts.host,
          port: opts.port,
          secure: false,
          ignoreTLS: true,
          pool: true,
          maxConnections: opts.maxConnections ?? 4,
          maxMessages: Infinity,
        });
  return {
    async send(message) {
      const info = await transport.sendMail(message);
      return { messageId: info.messageId, response: info.response ?? '' };
    },
    close() {
      transport.close();
    },
  };
}
