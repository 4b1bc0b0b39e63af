// Shared helpers of the domains-*.test.ts integration suites (not a test file itself).
import { createPublicKey, randomBytes, type KeyObject } from 'node:crypto';
import { expect } from 'vitest';
import type { DnsServer } from '../helpers/dns-server.js';
import type { TestServer } from '../helpers/server.js';

export { ISO_MS_Z, serviceNow } from '../helpers/clock.js';
export { errorPaths, expectProblem } from '../helpers/problems.js';
export { createKey, newTenant, seedTenant, sessionOf, type Tenant } from '../helpers/tenants.js';

export const DOMAIN_ID = /^dom_[0-9A-Za-z]{24}$/;

/** Provider hosts of the local server (docs/api.md#domains: locally under `svc.test`). */
export const FEEDBACK_HOST = 'feedback.svc.test';
export const SPF_INCLUDE = 'v=spf1 include:_spf.svc.test ~all';
export const TRACKING_TARGET = 'track.svc.test';

export interface DnsRecord {
  kind: string;
  type: string;
  host: string;
  value: string;
  priority?: number;
  required: boolean;
  status: 'pending' | 'ok' | 'mismatch' | 'missing';
  observed_value?: string;
  note?: string;
}
export interface Finding {
  kind: string;
  status: 'ok' | 'missing' | 'mismatch' | 'propagating';
  detail: string;
  expected: string;
  observed?: string;
  host?: string;
  type?: string;
  required?: boolean;
}
export interface Domain {
  id: string;
  name: string;
  status: 'pending' | 'verified' | 'failed' | 'degraded' | 'disabled';
  purpose: string[];
  mail_from_subdomain: string;
  tracking_host: string | null;
  created_at: string;
  verified_at: string | null;
  last_checked_at: string | null;
  records: DnsRecord[];
}
export interface Verified extends Domain {
  verified: boolean;
  propagating: boolean;
  findings: Finding[];
}

let counter = 0;
/** A fresh domain name under `.test` (a TLD the public-suffix list does not know, so registrable). */
export function uniqueName(label = 'd'): string {
  counter += 1;
  return `${label}-${randomBytes(3).toString('hex')}${counter}.test`;
}

/** POST /v1/domains, expecting 201. */
export async function addDomain(s: TestServer, token: string, body: Record<string, unknown> | string): Promise<Domain> {
  const r = await s.call('POST', '/v1/domains', { token, body: typeof body === 'string' ? { name: body } : body });
  expect(r.status, r.text).toBe(201);
  return r.body;
}

export async function getDomain(s: TestServer, token: string, id: string): Promise<Domain> {
  const r = await s.call('GET', `/v1/domains/${id}`, { token });
  expect(r.status, r.text).toBe(200);
  return r.body;
}

export async function verify(s: TestServer, token: string, id: string): Promise<Verified> {
  const r = await s.call('POST', `/v1/domains/${id}/verify`, { token });
  expect(r.status, r.text).toBe(200);
  return r.body;
}

/** POST /sandbox/domains/{id}/publish. */
export async function publish(
  s: TestServer,
  id: string,
  body: { kinds?: string[]; state?: 'visible' | 'propagating' } = {},
) {
  const r = await s.admin('POST', `/sandbox/domains/${id}/publish`, body);
  expect(r.status, r.text).toBe(200);
  return r.body as { records: { host: string; type: string; values: string[]; state: string }[] };
}

export function record(d: { records: DnsRecord[] }, kind: string): DnsRecord {
  const r = d.records.find((x) => x.kind === kind);
  expect(r, `record ${kind} in ${JSON.stringify(d.records.map((x) => x.kind))}`).toBeDefined();
  return r!;
}

export function finding(v: { findings: Finding[] }, kind: string): Finding {
  const f = v.findings.find((x) => x.kind === kind);
  expect(f, `finding ${kind} in ${JSON.stringify(v.findings)}`).toBeDefined();
  return f!;
}

/** The public key in a DKIM record value (`v=DKIM1; k=rsa; p=…`), parsed as DER SubjectPublicKeyInfo. */
export function dkimPublicKey(value: string): KeyObject {
  const m = /^v=DKIM1; k=rsa; p=([A-Za-z0-9+/]+={0,2})$/.exec(value);
  expect(m, `DKIM value: ${value}`).not.toBeNull();
  return createPublicKey({ key: Buffer.from(m![1]!, 'base64'), format: 'der', type: 'spki' });
}

/** Serves a domain's expected records from a test DNS responder (all kinds, or some). */
export function serveRecords(dns: DnsServer, d: { records: DnsRecord[] }, kinds?: string[]): void {
  const groups = new Map<string, { host: string; type: 'TXT' | 'MX' | 'CNAME'; values: string[] }>();
  for (const r of d.records) {
    if (kinds && !kinds.includes(r.kind)) continue;
    const key = `${r.host} ${r.type}`;
    const g = groups.get(key) ?? { host: r.host, type: r.type as 'TXT' | 'MX' | 'CNAME', values: [] };
    g.values.push(r.type === 'MX' ? `${r.priority} ${r.value}` : r.value);
    groups.set(key, g);
  }
  for (const g of groups.values()) dns.set(g.host, g.type, g.values);
}

export interface DomainEvent {
  id: string;
  type: string;
  data: { domain_id: string; name: string; status: string; findings: Finding[] };
  created_at: number;
}

/** The domain.* events of a workspace's outbox for one domain (oldest first). */
export function domainEvents(s: TestServer, workspaceId: string, domainId: string): DomainEvent[] {
  const rows: ReturnType<TestServer['core']['events']['outbox']> = [];
  for (;;) {
    const page = s.core.events.outbox(workspaceId, { limit: 100, afterSeq: rows.at(-1)?.seq });
    rows.push(...page.slice(0, 100));
    if (page.length <= 100) break;
  }
  return rows
    .filter((e) => e.type.startsWith('domain.'))
    .map((e) => ({ id: e.id, type: e.type, data: e.data as DomainEvent['data'], created_at: e.created_at }))
    .filter((e) => e.data.domain_id === domainId);
}
