// What the links check (links.ts) makes of what each URL answered: its findings (docs/checks.md#links).
import { isIP } from 'node:net';
import { getDomain } from 'tldts';
import type { CheckFinding, LinkResult } from '../../contract/checks.js';
import type { FoundUrl } from './markup.js';

/** Findings of one kind listed one by one at most this many times. */
const MAX_EACH = 20;

/** What one URL answered, after its redirects. */
export interface Probe {
  status: number | null;
  redirects: string[];
  contentType: string | null;
  /** What went wrong, as a finding names it. */
  failure: null | {
    kind: 'timeout' | 'unreachable' | 'tls' | 'host-unknown' | 'loop' | 'private';
    detail: string;
  };
  /** A redirect went from https to http. */
  downgraded: boolean;
}

const place = (f: { line: number | null; column: number | null }) =>
  f.line === null ? {} : { line: f.line, column: f.column! };

/** Links that are no absolute http(s) URL (`mailto:`, `tel:`, `cid:`, `data:` and anchors are left out before). */
export function notWebFindings(odd: FoundUrl[]): CheckFinding[] {
  return odd.slice(0, MAX_EACH).map((f) => {
    const placeholder = /\{\{|\}\}|\{%|%\}|\*\|/.test(f.url);
    return {
      severity: 'warning',
      rule: 'link-not-web',
      title: placeholder ? 'A link is an unfilled template placeholder' : 'A link that goes nowhere in email',
      detail: placeholder
        ? `${f.url} looks like a template variable that was not replaced.`
        : `${f.url} is not an absolute http(s) URL: a mail client has no page to resolve it against, and scripts do not run.`,
      url: f.url,
      ...place(f),
    };
  });
}

/** How each failure of a request is reported (`what`: "A link" or "An image"). */
const FAILURES: Record<
  NonNullable<Probe['failure']>['kind'],
  (what: string, detail: string, o: { host: string; timeoutMs: number; redirects: string[] }) => CheckFinding
> = {
  'host-unknown': (what, _d, o) => ({
    severity: 'error',
    rule: 'link-host-unknown',
    title: `${what} to a host that does not exist`,
    detail: `${o.host} does not resolve.`,
  }),
  tls: (what, detail) => ({ severity: 'error', rule: 'link-tls', title: `${what} with a TLS error`, detail }),
  timeout: (what, _d, o) => ({
    severity: 'warning',
    rule: 'link-timeout',
    title: `${what} did not answer`,
    detail: `No answer within ${o.timeoutMs / 1000} s.`,
  }),
  unreachable: (what, detail) => ({
    severity: 'error',
    rule: 'link-unreachable',
    title: `${what} cannot be reached`,
    detail,
  }),
  loop: (what, detail, o) => ({
    severity: 'error',
    rule: 'link-redirect-loop',
    title: `${what} never arrives`,
    detail: `${detail}: ${o.redirects.join(' → ')}`,
  }),
  private: (what, detail) => ({
    severity: 'warning',
    rule: 'link-redirect-private',
    title: `${what} redirects to an address that was not checked`,
    detail: `${detail}; svc serve --check-private-links follows it.`,
  }),
};

/** The findings of one URL: where it points, how, and what it answered (`probe` null: it was not asked). */
export function linkFindings(
  l: LinkResult,
  p: Probe | null,
  o: { host: string; kind: string | null; live: boolean | null; privateLinks: boolean; timeoutMs: number },
): CheckFinding[] {
  const out: CheckFinding[] = [];
  const what = l.kind === 'image' ? 'An image' : 'A link';
  const at = { url: l.url, ...place(l) };
  if (o.kind && o.live) {
    out.push({
      severity: 'error',
      rule: 'link-private',
      title: `${what} to a ${o.kind} address in live mail`,
      detail: `${o.host} is a ${o.kind} address: recipients cannot reach it.`,
      ...at,
    });
  } else if (o.kind && !o.privateLinks) {
    out.push({
      severity: 'notice',
      rule: 'link-private',
      title: `${what} to a ${o.kind} address, not checked`,
      detail:
        `${o.host} is a ${o.kind} address: recipients of live mail could not reach it. It was not checked: svc serve ` +
        '--check-private-links lets the links check reach such addresses.',
      ...at,
    });
  }
  if (l.url.startsWith('http:')) {
    out.push({
      severity: o.live ? 'warning' : 'notice',
      rule: 'link-insecure',
      title: `${what} over plain http:`,
      detail:
        'Readers see a "not secure" page, and the address can be read and changed on its way: use https:' +
        (o.live ? '.' : ' before this goes live.'),
      ...at,
    });
  }
  if (!p) return out;
  const f = p.failure;
  if (f) {
    out.push({ ...FAILURES[f.kind](what, f.detail, { ...o, redirects: p.redirects }), ...at });
  } else if (p.status !== null && p.status >= 400) {
    out.push({ severity: 'error', rule: 'link-broken', title: `${what} answers ${p.status}`, status: p.status, ...at });
  } else if (
    l.kind === 'image' &&
    p.status !== null &&
    p.status < 300 &&
    !/^image\//i.test(p.contentType ?? 'image/')
  ) {
    out.push({
      severity: 'warning',
      rule: 'image-not-image',
      title: 'An image URL that is no image',
      detail: `It answers ${p.contentType}.`,
      status: p.status,
      ...at,
    });
  }
  if (p.redirects.length && f?.kind !== 'loop') {
    out.push({
      severity: p.downgraded ? 'warning' : 'notice',
      rule: p.downgraded ? 'link-redirect-insecure' : 'link-redirects',
      title: `${what} redirects${p.redirects.length > 1 ? ` ${p.redirects.length} times` : ''}`,
      detail: `${[l.url, ...p.redirects].join(' → ')}${p.downgraded ? ' (from https to plain http)' : ''}. Link to where it ends.`,
      ...(p.status !== null ? { status: p.status } : {}),
      ...at,
    });
  }
  return out;
}

/** Links (not images) to a domain other than the From domain's, once per domain. */
export function otherDomainFindings(links: LinkResult[], fromDomain: string | null): CheckFinding[] {
  const fromOrg = fromDomain ? (getDomain(fromDomain) ?? fromDomain) : null;
  if (!fromOrg) return [];
  const others = new Map<string, LinkResult>();
  for (const l of links) {
    if (l.kind !== 'link') continue;
    const host = new URL(l.url).hostname.replace(/^\[|\]$/g, '');
    // An address is no domain to compare (and a private one has its finding).
    if (isIP(host)) continue;
    const org = getDomain(host) ?? host;
    if (org !== fromOrg && !others.has(org)) others.set(org, l);
  }
  return [...others].slice(0, MAX_EACH).map(([org, l]) => ({
    severity: 'notice',
    rule: 'link-other-domain',
    title: `Links to ${org}, not ${fromOrg}`,
    detail: `The message is from ${fromOrg} and links to ${org}: readers and spam filters trust links to the sender's own domain more.`,
    url: l.url,
    ...place(l),
  }));
}
