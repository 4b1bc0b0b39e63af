// What `svc serve` reports when it is up: the ready line, the demo account it seeds, what it keeps, and its admin token.
import * as z from 'zod';
import { lazySchema } from './lazy.js';

/** The demo account `svc serve` creates in a fresh data directory (and on every start with `--memory`). */
export const Seed = lazySchema(() =>
  z.object({
    email: z.string(),
    password: z.string(),
    user_id: z.string(),
    workspace_id: z.string(),
    domain: z.string(),
    domain_id: z.string(),
    api_key_test: z.string(),
    api_key_live: z.string(),
  }),
);
export type Seed = z.infer<typeof Seed>;

/**
 * The seed as the ready line reports it: on every start while the seeded account exists (its secrets are kept in the
 * data directory), with a key that was revoked since reported as null.
 */
export const ReadySeed = lazySchema(() =>
  Seed.extend({ api_key_test: z.string().nullable(), api_key_live: z.string().nullable() }),
);
export type ReadySeed = z.infer<typeof ReadySeed>;

/** What `svc serve` keeps (`--max-messages`, `--max-age`); null where there is no limit. */
export const Retention = lazySchema(() =>
  z.object({
    /** Caught messages kept, the newest; older ones are removed. */
    max_messages: z.number().int().nullable(),
    /** Seconds of service clock after which caught mail, and `/v1` messages and events, are removed. */
    max_age_seconds: z.number().int().nullable(),
  }),
);
export type Retention = z.infer<typeof Retention>;

/** The one JSON line `svc serve` prints on stdout once both listeners are up. */
export const ReadyLine = lazySchema(() =>
  z.object({
    ready: z.literal(true),
    api: z.string(),
    smtp: z.string(),
    inbox: z.string(),
    admin_token: z.string(),
    seed: ReadySeed.nullable(),
    retention: Retention,
    /** SMTP submission with STARTTLS (`smtp://HOST:PORT`): AUTH with an API key; null when turned off. */
    submission: z.string().nullable(),
    /** SMTP submission with implicit TLS (`smtps://HOST:PORT`); null when turned off. */
    submissions: z.string().nullable(),
    /**
     * Where mail clients read caught mail: POP3 (`pop3://HOST:PORT`) and IMAP (`imap://HOST:PORT`), each with STLS /
     * STARTTLS and any username, an API key or the admin token as the password; null when turned off.
     */
    pop3: z.string().nullable(),
    imap: z.string().nullable(),
    /**
     * The relay of releases and relay rules (`--relay-url`), its password shown as `***`, with its allow-list and
     * rules; absent without one.
     */
    relay: z.object({ url: z.string(), allow: z.array(z.string()), matching: z.array(z.string()) }).optional(),
    /** The certificate SMTP TLS presents (sink STARTTLS, submission): its file (null: made in memory) and fingerprint. */
    smtp_tls: z.object({ cert: z.string().nullable(), fingerprint_sha256: z.string() }),
  }),
);
export type ReadyLine = z.infer<typeof ReadyLine>;

/** How the admin token of `svc serve` begins (`adm_` + 32 base62 characters); it is no /v1 credential. */
export const ADMIN_TOKEN_PREFIX = 'adm_';
