// Events on demand (`svc trigger TYPE`, docs/testing.md#events-on-demand): a local server is made to produce an event
// through its real pipeline, never by writing the event itself. A mail event comes from a message sent with the
// client to the simulator recipient that produces it (docs/local-server.md#simulator-recipients); an open or a click
// from fetching the tracked pixel or link of the message as it was caught; a domain event from publishing a domain's
// records in the sandbox zone, or removing one, and verifying it. So the event, the message's timeline and every
// webhook delivery are the service's own.
import type { Domain } from '../contract/domains.js';
import type { Event } from '../contract/events.js';
import type { Client, Reply } from './index.js';
import { allDomains, domainNamed } from './domains.js';
import { listenEvents } from './listen.js';

/** The event types a trigger produces, and how: the simulator mailbox a message goes to, or a domain's record set. */
const RECIPES = {
  'email.queued': { mailbox: 'delivered' },
  'email.sent': { mailbox: 'delivered' },
  'email.delivered': { mailbox: 'delivered' },
  'email.deferred': { mailbox: 'defer' },
  'email.bounced': { mailbox: 'bounce' },
  'email.complained': { mailbox: 'complaint' },
  'email.failed': { mailbox: 'fail' },
  'email.opened': { mailbox: 'delivered', track: 'open' },
  'email.clicked': { mailbox: 'delivered', track: 'click' },
  'domain.verified': { domain: 'verify' },
  'domain.degraded': { domain: 'degrade' },
} as const satisfies Record<string, { mailbox: string; track?: 'open' | 'click' } | { domain: 'verify' | 'degrade' }>;

export type TriggerType = keyof typeof RECIPES;
export const TRIGGER_TYPES = Object.keys(RECIPES) as TriggerType[];

export function isTriggerType(type: string): type is TriggerType {
  return Object.hasOwn(RECIPES, type);
}

/** The link a message for `email.clicked` carries, which the click goes through to. */
export const TRIGGER_LINK = 'https://example.com/svc-trigger';

/** A trigger could not run (not a local server, no domain to use, the event did not come in time). */
export class TriggerError extends Error {
  constructor(
    message: string,
    /** How a person fixes it. */
    readonly hint?: string,
  ) {
    super(message);
    this.name = 'TriggerError';
  }
}

export interface TriggerOptions {
  /** The domain to send from or to verify/degrade (a name or a `dom_` id); see `triggerEvent`. */
  domain?: string;
  /** Wait for the event (default true). */
  wait?: boolean;
  /** Longest wait for the event, ms (default 30 s). */
  timeoutMs?: number;
  /** Waits between polls and for the timeout (the CLI's clock, so tests need not wait). */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /** Told of each thing created, as it is created (for a progress line). */
  onCreated?(what: TriggerCreated): void;
}

export type TriggerCreated =
  | { kind: 'email'; id: string; to: string; from: string }
  | { kind: 'domain'; id: string; name: string };

export interface TriggerResult {
  type: TriggerType;
  created: TriggerCreated[];
  /** The event produced; absent when not waited for. */
  event?: Event;
}

const DEFAULT_TIMEOUT_MS = 30_000;

/**
 * Produces one event of `type` on the local server the client points at. Mail events are sent from `domain` (default:
 * the workspace's verified domain added first: on a seeded server, the seeded `example.test`, whatever was added since). `domain.verified` takes `domain` if it is not yet verified, else a new one;
 * `domain.degraded` takes `domain` (verified first if it is not), else a new domain, verified first. A new domain is
 * named `trigger-<random>.test`.
 */
export async function triggerEvent(client: Client, type: TriggerType, o: TriggerOptions): Promise<TriggerResult> {
  const recipe: { mailbox?: string; track?: 'open' | 'click'; domain?: 'verify' | 'degrade' } = RECIPES[type];
  const created: TriggerCreated[] = [];
  const note = (c: TriggerCreated) => {
    created.push(c);
    o.onCreated?.(c);
  };
  const wait = o.wait ?? true;
  const ac = new AbortController();
  const timeoutMs = o.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  let timedOut = false;
  o.sleep(timeoutMs, ac.signal).then(
    () => {
      timedOut = true;
      ac.abort();
    },
    () => {},
  );
  try {
    // The domain is looked up first: a server that is not a sandbox is refused before anything is made.
    const given = o.domain === undefined ? undefined : await findDomain(client, o.domain);
    const from = recipe.domain ? undefined : (given ?? (await oldestVerified(client)));
    if (recipe.domain && !given) sandboxOnly(client, await client.call('listDomains', { query: { limit: 1 } }));
    // A click or an open needs the message caught first: its delivery is awaited on the same stream.
    const watched = recipe.track ? [type, 'email.delivered'] : [type];
    const events = wait || recipe.track ? await watch(client, watched, o.sleep, ac.signal) : undefined;
    const awaitEvent = (t: string, key: 'message_id' | 'domain_id', id: string) =>
      events!((e) => e.type === t && e.data[key] === id).catch((err: unknown) => {
        if (!timedOut) throw err;
        throw new TriggerError(
          `no ${t} event for ${id} within ${Math.round(timeoutMs / 1000)} s`,
          `see what happened with \`svc events list\`${key === 'message_id' ? ` or \`svc emails get ${id}\`` : ''}`,
        );
      });

    if (recipe.domain) {
      const d = await domainFor(client, recipe.domain, given, note);
      if (recipe.domain === 'degrade') {
        const dkim = d.records.find((r) => r.kind === 'dkim' && r.required) ?? d.records.find((r) => r.required)!;
        await client.sandbox('deleteDns', { query: { host: dkim.host, type: dkim.type as 'TXT' | 'CNAME' | 'MX' } });
      } else {
        await client.sandbox('publishDomain', { params: { id: d.id }, body: {} });
      }
      await client.call('verifyDomain', { params: { id: d.id } });
      return { type, created, event: wait ? await awaitEvent(type, 'domain_id', d.id) : undefined };
    }

    const to = `${recipe.mailbox}+trigger-${random()}@simulator.test`;
    const sender = `trigger@${from!.name}`;
    const sent = await client.call('sendEmail', {
      body: {
        from: `svc trigger <${sender}>`,
        to,
        subject: `svc trigger ${type}`,
        text: `Sent by \`svc trigger ${type}\` to produce that event through the sandbox. ${TRIGGER_LINK}`,
        html: `<p>Sent by <code>svc trigger ${type}</code> to produce that event through the sandbox.</p><p><a href="${TRIGGER_LINK}">A tracked link</a></p>`,
        tracking: { opens: recipe.track === 'open', clicks: recipe.track === 'click' },
      },
    });
    const id = sent.body.id;
    note({ kind: 'email', id, to, from: sender });
    if (recipe.track) {
      await awaitEvent('email.delivered', 'message_id', id);
      await followTracking(client, to, recipe.track);
    }
    return { type, created, event: wait ? await awaitEvent(type, 'message_id', id) : undefined };
  } finally {
    ac.abort();
  }
}

/** The domain named (or with this id) in the credential's workspace, from a local server only. */
async function findDomain(client: Client, nameOrId: string): Promise<Domain> {
  if (/^dom_/.test(nameOrId))
    return sandboxOnly(client, await client.call('getDomain', { params: { id: nameOrId } })).body;
  const found = await domainNamed(client, nameOrId, (reply) => sandboxOnly(client, reply));
  if (!found) {
    throw new TriggerError(
      `${nameOrId} is not a domain of this workspace`,
      `see them with \`svc domains list\`, or add it with \`svc domains add ${nameOrId}\``,
    );
  }
  return found;
}

/** The workspace's verified domain added first (domains are listed newest first). */
async function oldestVerified(client: Client): Promise<Domain> {
  const domains = await allDomains(client, (reply) => sandboxOnly(client, reply));
  const verified = domains.filter((d) => d.status === 'verified').at(-1);
  if (verified) return verified;
  const [newest] = domains;
  throw new TriggerError(
    'this workspace has no verified domain to send from',
    newest
      ? `verify one in the sandbox with \`svc domains verify ${newest.id} --publish\`, or give --domain`
      : 'add one with `svc domains add NAME`, then `svc domains verify dom_… --publish`',
  );
}

/** The domain a domain event happens to: the one given if it suits, else a new one; verified first for a degrade. */
async function domainFor(
  client: Client,
  purpose: 'verify' | 'degrade',
  given: Domain | undefined,
  note: (c: TriggerCreated) => void,
): Promise<Domain> {
  if (given && purpose === 'verify' && given.status === 'verified') {
    throw new TriggerError(
      `${given.name} is verified already: domain.verified comes when a domain becomes verified`,
      `trigger domain.degraded for it first (\`svc trigger domain.degraded --domain ${given.name}\`), or leave out --domain to use a new one`,
    );
  }
  let d = given;
  if (!d) {
    d = (await client.call('createDomain', { body: { name: `trigger-${random()}.test` } })).body;
    note({ kind: 'domain', id: d.id, name: d.name });
  }
  if (purpose === 'degrade' && d.status !== 'verified') {
    await client.sandbox('publishDomain', { params: { id: d.id }, body: {} });
    const checked = await client.call('verifyDomain', { params: { id: d.id } });
    if (!checked.body.verified) {
      throw new TriggerError(
        `${d.name} could not be verified, so it cannot degrade`,
        `see its records with \`svc domains dns ${d.id}\``,
      );
    }
    d = (await client.call('getDomain', { params: { id: d.id } })).body;
  }
  return d;
}

/** Opens the caught message's open pixel, or goes through its tracked link, as a mail program would. */
async function followTracking(client: Client, to: string, track: 'open' | 'click'): Promise<void> {
  const [caught] = (await client.sandbox('listMessages', { query: { to, limit: 1 } })).body.data;
  if (!caught) throw new TriggerError(`the message to ${to} was delivered but not caught`);
  const { html } = (await client.sandbox('getMessage', { params: { id: caught.id } })).body;
  const pattern =
    track === 'open' ? /<img\b[^>]*\bsrc="([^"]+\/t\/o\/[^"]+)"/i : /<a\b[^>]*\bhref="([^"]+\/t\/c\/[^"]+)"/i;
  const url = pattern.exec(html ?? '')?.[1]?.replace(/&amp;/g, '&');
  if (!url)
    throw new TriggerError(
      `the message caught for ${to} (${caught.id}) has no tracked ${track === 'open' ? 'pixel' : 'link'}`,
    );
  const res = await fetch(url, { redirect: 'manual', headers: { 'user-agent': 'svc-trigger' } });
  await res.arrayBuffer();
  if (res.status >= 400)
    throw new TriggerError(`the tracked ${track === 'open' ? 'pixel' : 'link'} ${url} answered ${res.status}`);
}

/**
 * Starts reading the workspace's events of `types` from now, and resolves once caught up, so that nothing produced
 * afterwards is missed; gives a function awaiting the first event that a predicate takes.
 */
async function watch(
  client: Client,
  types: string[],
  sleep: TriggerOptions['sleep'],
  signal: AbortSignal,
): Promise<(take: (e: Event) => boolean) => Promise<Event>> {
  let caughtUp!: () => void;
  const ready = new Promise<void>((resolve) => (caughtUp = resolve));
  const stream = listenEvents(client, {
    types,
    signal,
    sleep,
    onStatus: (s) => {
      if (s.kind === 'ready') caughtUp();
    },
  });
  let next = stream.next();
  next.catch(() => {}); // awaited below; a failure while nothing awaits it is not unhandled
  await Promise.race([ready, next]);
  return async (take) => {
    for (;;) {
      const r = await next;
      if (r.done) throw new TriggerError('the event stream ended');
      next = stream.next();
      next.catch(() => {});
      if (take(r.value.event)) return r.value.event;
    }
  };
}

/** The reply, if it came from a local server; a server that is not a sandbox is refused before anything is made. */
function sandboxOnly<T>(client: Client, reply: Reply<T>): Reply<T> {
  if (!reply.headers.sandbox) {
    throw new TriggerError(
      `${client.baseUrl} is not a local sandbox: svc trigger only drives \`svc serve\`, whose simulator produces events on demand`,
      'point it at a local server (`svc serve` prints its address; --base-url or SVC_BASE_URL)',
    );
  }
  return reply;
}

function random(): string {
  return crypto.randomUUID().slice(0, 8);
}
