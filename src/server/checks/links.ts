// `links`: every link and image URL of a message, asked over the network what it answers (docs/checks.md#links).
// HEAD first, GET when HEAD is refused; redirects followed one hop at a time and reported; a few requests at once and
// fewer per host, within a deadline for the message; answers kept for a while, per server run. A host is resolved
// before it is connected to, and an address that is not public (loopback, private, link-local, …) is not connected to
// unless `--check-private-links` allows it: a message must not make the server reach into the network it runs in. The
// connection is made to the address that was checked (the connector's lookup answers from the same resolution), never
// to a second answer.
import { isIP } from 'node:net';
import type { CheckFinding, LinkResult } from '../../contract/checks.js';
import { addressKind } from '../../lib/address-kind.js';
import { connectLookup, type HostAddress, hostLookup } from '../../lib/dns.js';
import { loadUndici } from '../../lib/undici.js';
import { VERSION } from '../../lib/version.js';
import { linkFindings, notWebFindings, otherDomainFindings, type Probe } from './link-findings.js';
import type { FoundUrl } from './markup.js';

/** How long one request may take, from connecting to the response's headers, unless told otherwise. */
export const LINK_TIMEOUT_MS = 10_000;
/** How long the links of one message may take in all, unless told otherwise. */
export const LINKS_DEADLINE_MS = 30_000;
/** Requests in flight at once for one message, and to one host whichever messages ask it. */
const MAX_IN_FLIGHT = 4;
const MAX_PER_HOST = 2;
/** Redirects followed before a link counts as going round in circles. */
const MAX_REDIRECTS = 10;
/** How long an answer is reused for another message (service clock). */
export const LINK_CACHE_MS = 5 * 60_000;

export interface LinkCheckerOptions {
  /** Connect to loopback and private addresses too (`svc serve --check-private-links`). */
  privateLinks: boolean;
  timeoutMs?: number;
  /** How long one message's links may take in all (default LINKS_DEADLINE_MS). */
  deadlineMs?: number;
  /** The service clock, for how long answers are kept. */
  now(): number;
  /** A DNS server (`HOST[:PORT]`) to look hosts up with (`--dns system --dns-server`); the system's lookup without. */
  dnsServer?: string | null;
}

type Resolution = { addresses: HostAddress[] } | { error: string };

/** Whether a host name is a loopback name that needs no DNS (RFC 6761). */
const isLocalName = (host: string) => host === 'localhost' || host.endsWith('.localhost');

/** A network failure in a few words, and what kind of finding it makes. */
function failureOf(err: unknown): NonNullable<Probe['failure']> {
  const e = err as NodeJS.ErrnoException & { cause?: NodeJS.ErrnoException };
  const code = e.cause?.code ?? e.code ?? '';
  const name = (e as Error).name;
  if (code === 'ESVCPRIVATE') return { kind: 'private', detail: (e.cause ?? e).message };
  if (name === 'TimeoutError' || name === 'AbortError' || /TIMEOUT/.test(code)) {
    return { kind: 'timeout', detail: 'no answer in time' };
  }
  if (/CERT|SSL|TLS|SELF_SIGNED|UNABLE_TO_VERIFY|UNABLE_TO_GET_ISSUER/.test(code)) {
    return { kind: 'tls', detail: `TLS: ${(e.cause ?? e).message}` };
  }
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN')
    return { kind: 'host-unknown', detail: 'the host name does not resolve' };
  const words: Record<string, string> = {
    ECONNREFUSED: 'the connection was refused',
    ECONNRESET: 'the connection was reset',
    EHOSTUNREACH: 'the host is unreachable',
    ENETUNREACH: 'the network is unreachable',
    UND_ERR_SOCKET: 'the connection closed before an answer',
  };
  return { kind: 'unreachable', detail: words[code] ?? ((e.cause ?? e).message || code) };
}

/**
 * The requests of the links checks: MAX_IN_FLIGHT at once for one message, and MAX_PER_HOST at once to one host whichever
 * messages ask it, each message's in the order given. A host's free slot goes to the waiting message that holds the
 * fewest of its slots, so one message's many links to a host hold back another message's link there by one answer at
 * most, never by all of them; a message whose time is up (its `signal`) leaves the queue.
 */
export function limiter() {
  type Message = { inFlight: number };
  type Host = { busy: number; held: Map<Message, number>; waiting: Map<Message, number> };
  type Wait = { message: Message; host: string; start: () => void; reject: (e: unknown) => void };
  const hosts = new Map<string, Host>();
  let waiting: Wait[] = [];
  const hostOf = (name: string): Host => {
    let h = hosts.get(name);
    if (!h) hosts.set(name, (h = { busy: 0, held: new Map(), waiting: new Map() }));
    return h;
  };
  const add = (counts: Map<Message, number>, m: Message, n: number) => {
    const total = (counts.get(m) ?? 0) + n;
    if (total) counts.set(m, total);
    else counts.delete(m);
  };
  const forget = (name: string, h: Host) => {
    if (!h.busy && !h.waiting.size) hosts.delete(name);
  };
  /** Whether another message that can start a request is waiting for the host with fewer of its slots than `m`. */
  const behind = (h: Host, m: Message) => {
    const mine = h.held.get(m) ?? 0;
    if (!mine) return false;
    for (const other of h.waiting.keys()) {
      if (other !== m && other.inFlight < MAX_IN_FLIGHT && (h.held.get(other) ?? 0) < mine) return true;
    }
    return false;
  };
  const next = () => {
    for (let i = 0; i < waiting.length; i++) {
      const w = waiting[i]!;
      const h = hostOf(w.host);
      if (w.message.inFlight >= MAX_IN_FLIGHT || h.busy >= MAX_PER_HOST || behind(h, w.message)) continue;
      waiting.splice(i--, 1);
      w.start();
    }
  };
  return {
    /** A limit for the requests of one message, whose waits end when `signal` aborts. */
    message(signal?: AbortSignal) {
      const message: Message = { inFlight: 0 };
      signal?.addEventListener(
        'abort',
        () => {
          const gone = waiting.filter((w) => w.message === message);
          waiting = waiting.filter((w) => w.message !== message);
          for (const w of gone) {
            const h = hostOf(w.host);
            add(h.waiting, message, -1);
            forget(w.host, h);
            w.reject(signal.reason);
          }
        },
        { once: true },
      );
      return <T>(host: string, task: () => Promise<T>): Promise<T> =>
        new Promise<T>((resolve, reject) => {
          if (signal?.aborted) return reject(signal.reason);
          const h = hostOf(host);
          const start = () => {
            add(h.waiting, message, -1);
            add(h.held, message, 1);
            h.busy++;
            message.inFlight++;
            // The slot is free (and the next task started) before the caller goes on.
            task()
              .finally(() => {
                add(h.held, message, -1);
                h.busy--;
                message.inFlight--;
                forget(host, h);
                next();
              })
              .then(resolve, reject);
          };
          add(h.waiting, message, 1);
          waiting.push({ message, host, start, reject });
          next();
        });
    },
  };
}

/** A promise's value, or null when `signal` aborts first. */
function inTime<T>(p: Promise<T>, signal: AbortSignal): Promise<T | null> {
  if (signal.aborted) return Promise.resolve(null);
  return new Promise<T | null>((resolve, reject) => {
    const late = () => resolve(null);
    signal.addEventListener('abort', late, { once: true });
    p.finally(() => signal.removeEventListener('abort', late)).then(resolve, reject);
  });
}

export interface LinkContext {
  /** Live mail (a `/v1` message sent with a live key); false for test mail, null for mail from another program. */
  live: boolean | null;
  /** The From address's domain. */
  fromDomain: string | null;
  /** The URLs the service rewrote for click tracking (as their authors wrote them). */
  tracked: ReadonlySet<string>;
  /** Ask again rather than reuse a kept answer. */
  refresh: boolean;
}

export type LinksOutcome =
  | { skipped: string; links: LinkResult[] }
  | {
      skipped: null;
      links: LinkResult[];
      findings: CheckFinding[];
      /** False when links were left unchecked for want of time (`links-unchecked`). */
      inTime: boolean;
    };

export function createLinkChecker(opts: LinkCheckerOptions) {
  const timeoutMs = opts.timeoutMs ?? LINK_TIMEOUT_MS;
  const deadlineMs = opts.deadlineMs ?? LINKS_DEADLINE_MS;
  const notInTime = `not checked: no answer within the ${deadlineMs / 1000} s the check has for a message`;
  const resolutions = new Map<string, { at: number; promise: Promise<Resolution> }>();
  // Answers, once they came: a message does not wait on a request another message made, which that message's deadline
  // may end.
  const answers = new Map<string, { at: number; probe: Probe }>();
  const requests = limiter();
  // Ends every message's check when the server stops.
  const closing = new AbortController();
  /** A host's addresses, from the system's lookup (hosts file included) or the DNS server given. */
  const lookupHost = hostLookup(opts.dnsServer ?? null, timeoutMs);

  /** A host's addresses, looked up once a while (service clock). */
  function resolve(host: string, refresh = false): Promise<Resolution> {
    const kept = resolutions.get(host);
    if (kept && !refresh && opts.now() - kept.at < LINK_CACHE_MS) return kept.promise;
    const promise: Promise<Resolution> = isIP(host)
      ? Promise.resolve({ addresses: [{ address: host, family: isIP(host) }] })
      : isLocalName(host)
        ? Promise.resolve({
            addresses: [
              { address: '127.0.0.1', family: 4 },
              { address: '::1', family: 6 },
            ],
          })
        : lookupHost(host).then(
            (addresses) => ({ addresses }),
            (err: NodeJS.ErrnoException) => ({ error: err.code ?? err.message }),
          );
    resolutions.set(host, { at: opts.now(), promise });
    return promise;
  }

  /** The addresses a connection may go to; a refusal names the kind of address. */
  async function allowed(host: string): Promise<HostAddress[]> {
    const r = await resolve(host);
    if ('error' in r) throw Object.assign(new Error(`${host} does not resolve (${r.error})`), { code: r.error });
    if (!opts.privateLinks) {
      const kinds = r.addresses.map((a) => addressKind(a.address)).filter((k) => k !== null);
      if (kinds.length) {
        throw Object.assign(new Error(`${host} is a ${kinds[0]} address`), { code: 'ESVCPRIVATE' });
      }
    }
    return r.addresses;
  }

  // The connector looks a host up through `allowed`: the address it connects to is the one that was checked.
  const lookup = connectLookup(allowed);
  // undici is loaded by the first link checked, not with the server.
  let undici: ReturnType<typeof loadAgent> | undefined;
  const loadAgent = () =>
    loadUndici().then(({ Agent, request }) => ({
      request,
      agent: new Agent({
        connect: { lookup, timeout: timeoutMs },
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
        connections: MAX_PER_HOST,
      }),
    }));

  /** What a message's requests go through: its limit, and the signal that ends them when its time is up. */
  type Asking = { limit: ReturnType<typeof requests.message>; signal: AbortSignal };

  /** One request of one hop; its status, Location and Content-Type, the body left unread. */
  async function ask(url: URL, method: 'HEAD' | 'GET', { limit, signal }: Asking) {
    const { request, agent } = await (undici ??= loadAgent());
    const res = await limit(url.host, () =>
      request(url, {
        method,
        dispatcher: agent,
        headers: { 'user-agent': `svc-link-check/${VERSION}`, accept: '*/*' },
        signal: AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)]),
      }),
    );
    await res.body.dump().catch(() => {});
    const h = (name: string) => {
      const v = res.headers[name];
      return Array.isArray(v) ? (v[0] ?? null) : (v ?? null);
    };
    return { status: res.statusCode, location: h('location'), contentType: h('content-type') };
  }

  /** Follows a URL to its final answer; null when the message's time ran out first. */
  async function probe(start: string, asking: Asking): Promise<Probe | null> {
    const redirects: string[] = [];
    let url = new URL(start);
    let downgraded = false;
    const seen = new Set([url.href]);
    for (;;) {
      let answer: Awaited<ReturnType<typeof ask>>;
      try {
        // Every hop's host passes the address check, an IP address too (which the connector does not look up).
        if ((await inTime(allowed(url.hostname.replace(/^\[|\]$/g, '')), asking.signal)) === null) return null;
        answer = await ask(url, 'HEAD', asking);
        // Some servers refuse HEAD (405, 501) or answer it wrongly: a GET has the last word on an error.
        if (answer.status >= 400) answer = await ask(url, 'GET', asking);
      } catch (err) {
        if (asking.signal.aborted) return null;
        return { status: null, redirects, contentType: null, failure: failureOf(err), downgraded };
      }
      if (answer.status >= 300 && answer.status < 400 && answer.location) {
        const next = new URL(answer.location, url);
        if (url.protocol === 'https:' && next.protocol === 'http:') downgraded = true;
        redirects.push(next.href);
        if (seen.has(next.href) || redirects.length > MAX_REDIRECTS) {
          return {
            status: answer.status,
            redirects,
            contentType: null,
            failure: {
              kind: 'loop',
              detail: seen.has(next.href)
                ? 'it redirects in a circle'
                : `it redirects more than ${MAX_REDIRECTS} times`,
            },
            downgraded,
          };
        }
        seen.add(next.href);
        if (next.protocol !== 'http:' && next.protocol !== 'https:') {
          return { status: answer.status, redirects, contentType: null, failure: null, downgraded };
        }
        url = next;
        continue;
      }
      return { status: answer.status, redirects, contentType: answer.contentType, failure: null, downgraded };
    }
  }

  async function answerOf(url: string, refresh: boolean, asking: Asking): Promise<Probe | null> {
    const kept = answers.get(url);
    if (kept && !refresh && opts.now() - kept.at < LINK_CACHE_MS) return kept.probe;
    const at = opts.now();
    const p = await probe(url, asking);
    if (p) answers.set(url, { at, probe: p });
    return p;
  }

  return {
    /** Checks every URL found in a message (links of the HTML and the text part, images). */
    async check(found: FoundUrl[], ctx: LinkContext): Promise<LinksOutcome> {
      const findings: CheckFinding[] = [];
      const byUrl = new Map<string, FoundUrl>();
      for (const f of found) {
        const prior = byUrl.get(f.url);
        // The HTML's place wins over the text part's (which has none); a link over an image.
        if (!prior || (prior.line === null && f.line !== null)) byUrl.set(f.url, { ...f, kind: prior?.kind ?? f.kind });
      }
      const web: { f: FoundUrl; url: URL }[] = [];
      const odd: FoundUrl[] = [];
      for (const f of byUrl.values()) {
        if (/^(mailto|tel|sms|cid|data):/i.test(f.url) || f.url.startsWith('#')) continue;
        let url: URL | null = null;
        try {
          url = new URL(f.url);
        } catch {}
        if (url && (url.protocol === 'http:' || url.protocol === 'https:')) web.push({ f, url });
        else odd.push(f);
      }
      findings.push(...notWebFindings(odd));
      // The message's links have deadlineMs in all: what has not answered by then is left unchecked, not waited for.
      const signal = AbortSignal.any([AbortSignal.timeout(deadlineMs), closing.signal]);
      const asking: Asking = { limit: requests.message(signal), signal };
      // Which hosts resolve: none at all means no network here, and names cannot be checked.
      const hosts = [...new Set(web.map((w) => w.url.hostname.replace(/^\[|\]$/g, '')))];
      const resolved = new Map(
        await Promise.all(hosts.map(async (h) => [h, await inTime(resolve(h, ctx.refresh), signal)] as const)),
      );
      const names = hosts.filter((h) => !isIP(h) && !isLocalName(h));
      const offline =
        names.length > 0 &&
        names.every((h) => {
          const r = resolved.get(h);
          return r && 'error' in r;
        });

      const results = await Promise.all(
        web.map(async ({ f, url }): Promise<{ link: LinkResult; probe: Probe | null }> => {
          const host = url.hostname.replace(/^\[|\]$/g, '');
          const r = resolved.get(host);
          const base = {
            url: f.url,
            kind: f.kind,
            tracked: ctx.tracked.has(f.url),
            line: f.line,
            column: f.column,
          };
          const unchecked = (error: string) => ({ link: { ...base, status: null, redirects: [], error }, probe: null });
          if (offline && !isIP(host) && !isLocalName(host)) return unchecked('not checked: no host name resolves here');
          const kind = kindOf(r);
          if (kind && !opts.privateLinks) {
            return unchecked(`not checked: ${host} is a ${kind} address (svc serve --check-private-links checks it)`);
          }
          const p = r ? await answerOf(f.url, ctx.refresh, asking) : null;
          if (!p) return unchecked(notInTime);
          return {
            link: { ...base, status: p.status, redirects: p.redirects, error: p.failure?.detail ?? null },
            probe: p,
          };
        }),
      );
      const links = results.map((r) => r.link);

      for (const { link, probe } of results) {
        const host = new URL(link.url).hostname.replace(/^\[|\]$/g, '');
        findings.push(
          ...linkFindings(link, probe, {
            host,
            kind: kindOf(resolved.get(host)),
            live: ctx.live,
            privateLinks: opts.privateLinks,
            timeoutMs,
          }),
        );
      }
      findings.push(...otherDomainFindings(links, ctx.fromDomain));
      const late = links.filter((l) => l.error === notInTime);
      if (late.length) {
        const some = `${late
          .slice(0, 5)
          .map((l) => l.url)
          .join(', ')}${late.length > 5 ? ', …' : ''}`;
        findings.push({
          severity: 'warning',
          rule: 'links-unchecked',
          title: `${late.length} link${late.length === 1 ? ' was' : 's were'} not checked in time`,
          detail:
            `The links check gives a message ${deadlineMs / 1000} s, and these had not answered by then: ${some}. ` +
            'They are asked again when the report is next asked for.',
        });
      }

      const checked = links.filter((l) => !l.error?.startsWith('not checked'));
      if (offline) {
        const reason = `no host name resolves here (looked up ${names.slice(0, 5).join(', ')}${names.length > 5 ? ', …' : ''}): this machine seems to have no network`;
        if (!checked.length) return { skipped: `The links were not checked: ${reason}.`, links };
        findings.push({
          severity: 'notice',
          rule: 'links-offline',
          title: `${links.length - checked.length} links were not checked`,
          detail: `${reason.charAt(0).toUpperCase()}${reason.slice(1)}.`,
        });
      }
      return { skipped: null, links, findings, inTime: !late.length };
    },
    /** Loads undici now, in the background, rather than with the first link checked. */
    warm: () => void (undici ??= loadAgent()).catch(() => {}),
    close: async () => {
      closing.abort();
      if (undici) await (await undici).agent.close();
    },
  };
}
export type LinkChecker = ReturnType<typeof createLinkChecker>;

/** The kind of the first non-public address a host resolved to; null when all are public (or it did not resolve). */
const kindOf = (r: Resolution | null | undefined) =>
  !r || 'error' in r ? null : (r.addresses.map((a) => addressKind(a.address)).find((k) => k !== null) ?? null);
