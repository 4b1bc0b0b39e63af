// The relay (`svc serve --relay-url`): nodemailer's pooled SMTP transport to a smarthost, which releases and relay
// rules (core/relay.ts, workers/relay.ts) send caught mail through, its bytes as caught and only the envelope chosen.
// `smtps://` is TLS from the start; on `smtp://` nodemailer upgrades with STARTTLS when the relay offers it;
// `?tls=skip-verify` takes a relay's self-signed certificate. The credentials stay in the transport's options: never in
// what it answers or logs (nodemailer logs nothing unless told to).
import { createRequire } from 'node:module';
import type { Transporter } from 'nodemailer';
import type { RelayMail, RelayTransport } from '../core/relay.js';

// nodemailer is loaded by the first relay opened, not with the server.
const require = createRequire(import.meta.url);

/** How long the relay has to accept a connection and greet it, and to answer each command. */
const CONNECT_TIMEOUT_MS = 10_000;
const SOCKET_TIMEOUT_MS = 60_000;

export interface OpenRelay extends RelayTransport {
  close(): void;
}

/** Opens the relay's transport (no connection until the first message). */
export function openRelay(url: string): OpenRelay {
  const u = new URL(url);
  const secure = u.protocol === 'smtps:';
  const nodemailer = require('nodemailer') as typeof import('nodemailer');
  const transport: Transporter = nodemailer.createTransport({
    pool: true,
    maxConnections: 2,
    host: u.hostname.replace(/^\[|\]$/g, ''),
    port: u.port ? Number(u.port) : secure ? 465 : 587,
    secure,
    ...(u.username ? { auth: { user: decodeURIComponent(u.username), pass: decodeURIComponent(u.password) } } : {}),
    tls: u.searchParams.get('tls') === 'skip-verify' ? { rejectUnauthorized: false } : {},
    connectionTimeout: CONNECT_TIMEOUT_MS,
    greetingTimeout: CONNECT_TIMEOUT_MS,
    socketTimeout: SOCKET_TIMEOUT_MS,
    logger: false,
  });
  return {
    async send(mail: RelayMail): Promise<string> {
      // `raw` goes as it is: nodemailer neither adds header fields nor re-encodes it, so its DKIM signature holds.
      const info = (await transport.sendMail({ envelope: mail.envelope, raw: mail.raw })) as { response?: string };
      return info.response ?? '250 OK';
    },
    close() {
      transport.close();
    },
  };
}
