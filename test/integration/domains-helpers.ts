// Shared helpers of the domains-*.test.ts integration suites (not a test file itself).
import { createPublicKey, randomBytes, type KeyObject } from 'node:crypto';
import { expect } from 'vitest';
import type { DnsServer } from '../helpers/dns-server.js';
import type { Reply, TestServer } from '../helpers/server.js';

export const SERVICE_VERSION = '2026-08-01';
export const DOMAIN_ID = /^dom_[0-9A-Za-z]{24}$/;
export const ISO_MS_Z = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** Provider hosts of the local server (decisions.md "provider hosts": locally under `svc.test`). */
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

/** Asserts a Problem response: status, code, media type, version header, request id. */
export function expectProblem(r: Reply, status: number, code?: string): void {
  const summary = `${r.status} ${r.text}`;
  expect(r.status, summary).toBe(status);
  expect(r.headers.get('content-type'), summary).toMatch(/^application\/problem\+json\b/);
  expect(r.headers.get('service-version')).toBe(SERVICE_VERSION);
  expect(r.body, summary).toBeTypeOf('object');
  if (code !== undefined) expect(r.body.code, summary).toBe(code);
  expect(r.body.status).toBe(status);
  expect(r.body.request_id).toBe(r.headers.get('x-request-id'));
}

/** The `errors[].path` values of a Problem. */
export function errorPaths(r: Reply): string[] {
  return (r.body?.errors ?? []).map((e: { path: string }) => e.path);
}

export interface Tenant {
  email: string;
  password: string;
  workspace_id: string;
}

export function seedTenant(s: TestServer): Tenant {
  return { email: s.seed!.email, password: s.seed!.password, workspace_id: s.seed!.workspace_id };
}

/** A fresh access token (they live 15 minutes and these suites move the clock). */
export async function sessionOf(s: TestServer, t: Tenant): Promise<string> {
  const r = await s.call('POST', '/v1/auth/login', { body: { email: t.email, password: t.password, workspace_id: t.workspace_id } });
  expect(r.status, r.text).toBe(200);
  return r.body.access_token;
}

/** A second account with its own workspace, through an invite. */
export async function newTenant(s: TestServer, label: string): Promise<Tenant> {
  const invite = await s.admin('POST', '/sandbox/invites', {});
  expect(invite.status, invite.text).toBe(201);
  const email = `${label}-${randomBytes(4).toString('hex')}@example.org`;
  const password = `pw-${randomBytes(12).toString('hex')}`;
  const r = await s.call('POST', '/v1/auth/signup', {
    body: { email, password, workspace_name: `${label} workspace`, invite_code: invite.body.code },
  });
  expect(r.status, r.text).toBe(201);
  return { email, password, workspace_id: r.body.workspace.id };
}

/** Creates an API key through a session (POST /v1/api-keys). */
export async function createKey(s: TestServer, t: Tenant, body: Record<string, unknown>) {
  const r = await s.call('POST', '/v1/api-keys', { token: await sessionOf(s, t), body: { name: 'domains test key', ...body } });
  expect(r.status, r.text).toBe(201);
  return r.body as { id: string; key: string; scopes: string[] };
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
export async function publish(s: TestServer, id: string, body: { kinds?: string[]; state?: 'visible' | 'propagating' } = {}) {
  const r = await s.admin('POST', `/sandbox/domains/${id}/publish`, body);
  expect(r.status, r.text).toBe(200);
  return r.body as { records: { host: string; type: string; values: string[]; state: string }[] };
}

/** The service clock, in milliseconds. */
export async function serviceNow(s: TestServer): Promise<number> {
  const r = await s.admin('GET', '/sandbox/clock');
  expect(r.status).toBe(200);
  return Date.parse(r.body.now);
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
  const rows: ReturnType<TestServer['core']['eventStore']['list']> = [];
  for (;;) {
    const page = s.core.eventStore.list(workspaceId, { limit: 100, afterSeq: rows.at(-1)?.seq });
    rows.push(...page.slice(0, 100));
    if (page.length <= 100) break;
  }
  return rows
    .filter((e) => e.type.startsWith('domain.'))
    .map((e) => ({ id: e.id, type: e.type, data: JSON.parse(e.data), created_at: e.created_at }))
    .filter((e) => e.data.domain_id === domainId);
}
