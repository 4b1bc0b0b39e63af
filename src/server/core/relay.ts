// The relay of caught mail (docs/local-server.md#release-and-relay): a release sends one caught message, its bytes as
// caught, to addresses the caller chooses; a relay rule (`--relay-matching`) passes live mail to its matching
// recipients as it is caught, as a `relay` job (workers/relay.ts) on the service's one retry policy. Both obey the
// allow-list, and both are kept on the message's timeline (store/relays.ts, shown by inbox-read.ts).
//
// Core does not open the relay: the composition root attaches the transport the outbound side opened (index.ts), so
// that a release, which answers its caller with the relay's reply, goes the way a relay job goes.
import type { ReleaseResult } from '../../contract/inbox.js';
import { iso } from '../../lib/clock.js';
import type { EmailStore } from '../store/emails.js';
import type { InboxStore } from '../store/inbox.js';
import type { RelayStore } from '../store/relays.js';
import type { Deps } from './deps.js';
import { fail, invalidField } from './errors.js';
import type { StoredCatch } from './inbox-catch.js';
import { noMessage } from './inbox-read.js';
import { addressMatcher, bareAddress, type RelayConfig } from './rules/relay.js';

/** What the relay's transport is handed: the envelope chosen and the bytes as caught. */
export interface RelayMail {
  envelope: { from: string; to: string[] };
  raw: Buffer;
}

/** The relay as the outbound side opened it: sends, and resolves with the relay's reply (`250 …`). */
export interface RelayTransport {
  send(mail: RelayMail): Promise<string>;
}

/** An SMTP failure as nodemailer reports it: the reply code and text when the relay answered, none when it did not. */
export type RelayError = Error & { responseCode?: number; response?: string; code?: string };

/** The relay's reply (`550 5.1.1 No such user`), or what went wrong when there was none; credentials never in it. */
export function relayReason(e: RelayError, config: Pick<RelayConfig, 'url' | 'shown'>): string {
  const said = (e.response ?? e.message).replace(/\s+/g, ' ').trim();
  return said.split(config.url).join(config.shown);
}

/** The timeline entries the relay writes (docs/local-server.md#release-and-relay). */
export const RELAY_ENTRY = {
  released: 'relay.released',
  releaseRefused: 'relay.release_refused',
  relayed: 'relay.relayed',
  deferred: 'relay.deferred',
  refused: 'relay.refused',
  failed: 'relay.failed',
} as const;

export interface RelayDeps extends Pick<Deps, 'clock' | 'commit' | 'jobs' | 'log'> {
  config: RelayConfig | null;
  inbox: Pick<InboxStore, 'get' | 'raw'>;
  relays: RelayStore;
  /** A `/v1` message's mode (test-key mail is never relayed by a rule). */
  message: Pick<EmailStore, 'get'>['get'];
}

export function createRelay(deps: RelayDeps) {
  const { config, clock, log } = deps;
  const allowed = config?.allow.length ? addressMatcher(config.allow) : () => true;
  const matching = config?.matching.length ? addressMatcher(config.matching) : null;
  let transport: RelayTransport | null = null;

  /** Keeps an entry on the message's timeline (a message deleted meanwhile keeps none). */
  async function record(id: string, type: string, detail: Record<string, unknown>): Promise<void> {
    await deps.commit(() => deps.relays.add(id, type, clock.now(), detail));
  }

  function notConfigured(): never {
    return fail(
      'relay_not_configured',
      'This server has no relay to release mail through: start it with `svc serve --relay-url ' +
        'smtp://user:pass@host:port` (or SVC_RELAY_URL).',
    );
  }

  /** The envelope sender of what the relay sends: `--relay-from`, else the caught message's own (`<>` for none). */
  const mailFrom = (caughtFrom: string | null) => config?.from ?? caughtFrom ?? '';

  return {
    /** The relay as the sandbox shows it (`GET /sandbox/relay`, the inbox page's Release dialog): no credentials. */
    info() {
      return {
        configured: config !== null,
        relay: config?.shown ?? null,
        from: config?.from ?? null,
        allow: config?.allow ?? [],
        matching: config?.matching ?? [],
      };
    },

    /** Attaches the relay's transport (the composition root, once the outbound side is open). */
    attach(t: RelayTransport | null): void {
      transport = t;
    },

    /**
     * Sends a caught message, its bytes untouched, to `to` through the relay: the relay's reply, kept on the message's
     * timeline either way. No relay: 409; a recipient outside the allow-list: 403, nothing sent; a refusal or a relay
     * out of reach: 502 naming its reply.
     */
    async release(id: string, to: string | string[]): Promise<ReleaseResult> {
      if (!config || !transport) return notConfigured();
      const recipients = [...new Set((Array.isArray(to) ? to : [to]).map(bareAddress))];
      for (const [i, r] of recipients.entries()) {
        if (!/^[^\s@<>]+@[^\s@<>]+$/.test(r)) {
          throw invalidField(Array.isArray(to) ? `to[${i}]` : 'to', `${JSON.stringify(r)} is not an email address`);
        }
      }
      const outside = recipients.filter((r) => !allowed(r));
      if (outside.length) {
        fail(
          'relay_recipient_not_allowed',
          `${outside.join(', ')} ${outside.length > 1 ? 'are' : 'is'} outside the relay's allow-list ` +
            `(--relay-allow ${config.allow.join(', ')}): nothing was sent.`,
        );
      }
      const row = deps.inbox.get(id) ?? noMessage();
      const raw = deps.inbox.raw(id) ?? noMessage();
      const envelope = { from: mailFrom(row.mail_from), to: recipients };
      const base = { to: recipients, mail_from: envelope.from, relay: config.shown };
      let response: string;
      try {
        response = await transport.send({ envelope, raw });
      } catch (err) {
        const e = err as RelayError;
        const reply = relayReason(e, config);
        await record(id, RELAY_ENTRY.releaseRefused, {
          ...base,
          ...(e.responseCode ? { smtp_code: e.responseCode } : {}),
          response: reply,
        });
        log.info('a release was not sent', { id, relay: config.shown, reply });
        if (e.responseCode) {
          return fail('relay_refused', `The relay (${config.shown}) refused the message: ${reply}.`, {
            members: { smtp_code: e.responseCode, smtp_reply: reply },
          });
        }
        return fail('relay_unreachable', `The relay (${config.shown}) could not be reached: ${reply}.`);
      }
      const at = clock.now();
      await record(id, RELAY_ENTRY.released, { ...base, response });
      return { id, ...base, response, released_at: iso(at) };
    },

    /**
     * A message is being stored (in its transaction): when a relay rule matches its recipients and it is live mail
     * (sent through `/v1` with a live key), a `relay` job, committed with it, passes it on. The job runs later, so a
     * relay never holds up catching.
     */
    caught(row: StoredCatch): void {
      if (!config || !matching || !row.svc_message_id) return;
      try {
        if (deps.message(row.svc_message_id)?.mode !== 'live') return;
        const to = [...new Set(row.rcpt_to.map(bareAddress))].filter((r) => matching(r) && allowed(r));
        if (to.length) deps.jobs.enqueue('relay', { caught_id: row.id, to });
      } catch (err) {
        log.error('a relay rule could not be applied', { id: row.id, error: String(err) });
        throw err;
      }
    },

    /** What a relay job sends: the envelope and the bytes as caught; null once the message is gone. */
    relayMail(id: string, to: string[]): RelayMail | null {
      const row = deps.inbox.get(id);
      const raw = row && deps.inbox.raw(id);
      return row && raw ? { envelope: { from: mailFrom(row.mail_from), to }, raw } : null;
    },

    /** Keeps a relay job's outcome on the message's timeline, with the relay as shown. */
    record: (id: string, type: string, detail: Record<string, unknown>) =>
      record(id, type, { relay: config?.shown ?? null, ...detail }),

    /** The relay as shown, and its reason for a failure (credentials never in it). */
    reason: (e: RelayError) => (config ? relayReason(e, config) : e.message),
  };
}
export type Relay = ReturnType<typeof createRelay>;
