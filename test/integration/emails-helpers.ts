// Shared helpers of the emails-*.test.ts integration suites (not a test file itself).
import { randomBytes } from 'node:crypto';
import { expect } from 'vitest';
import type { Reply, TestServer } from '../helpers/server.js';

export { ISO_MS_Z, serviceNow } from '../helpers/clock.js';
export { errorPaths, expectProblem } from '../helpers/problems.js';
export { createKey, newTenant, seedTenant, sessionOf } from '../helpers/tenants.js';

export const MSG_ID = /^msg_[0-9A-Za-z]{24}$/;
export const FROM = 'sender@example.test';

/** The GTUBE and EICAR test strings (docs/api.md#sending: the abuse filter). */
export const GTUBE = 'XJS*C4JDBQADN1.NSBN3*2IDNEN*GTUBE-STANDARD-ANTI-UBE-TEST-EMAIL*C.34X';
export const EICAR = 'X5O!P%@AP[4\\PZX54(P^)7CC)7}$EICAR-STANDARD-ANTIVIRUS-TEST-FILE!$H+H*';

let counter = 0;
/** A fresh recipient address nobody else in the run uses (so sink look-ups by `to` are exact). */
export function rcpt(label = 'r'): string {
  counter += 1;
  return `${label}-${randomBytes(3).toString('hex')}-${counter}@dest.example`;
}
/** A simulator address with a unique `+label` (docs/local-server.md: simulator recipients). */
export function sim(box: string): string {
  counter += 1;
  return `${box}+t${randomBytes(3).toString('hex')}${counter}@simulator.test`;
}

/** A minimal valid send request, with overrides. */
export function mail(over: Record<string, unknown> = {}): Record<string, unknown> {
  return { from: FROM, to: rcpt(), subject: 'Hello', text: 'Hello there', ...over };
}

/** POST /v1/emails with the seed test key unless another is given. */
export function send(
  s: TestServer,
  body: unknown,
  o: { key?: string | null; headers?: Record<string, string>; raw?: string } = {},
): Promise<Reply> {
  const token = o.key === undefined ? s.seed!.api_key_test : o.key;
  return s.call('POST', '/v1/emails', { body, token, headers: o.headers, raw: o.raw });
}

/** Sends and expects 202; returns the MessageAccepted body. */
export async function sendOk(s: TestServer, body: unknown, o: { key?: string; headers?: Record<string, string> } = {}) {
  const r = await send(s, body, o);
  expect(r.status, r.text).toBe(202);
  expect(r.body.id).toMatch(MSG_ID);
  return r.body as { id: string; status: 'queued' | 'scheduled'; created_at: string };
}

/** GET /v1/emails/{id} with the seed test key. */
export async function getMessage(s: TestServer, id: string, key = s.seed!.api_key_test) {
  const r = await s.call('GET', `/v1/emails/${id}`, { token: key });
  expect(r.status, r.text).toBe(200);
  return r.body as {
    id: string;
    status: string;
    plane: string;
    from: string;
    to: string[];
    subject: string;
    tags: { name: string; value: string }[];
    created_at: string;
    events: { type: string; occurred_at: string; detail: Record<string, any> }[];
  };
}

/** Caught mail whose envelope or To/Cc has `to` (newest first), without running jobs. */
export async function caughtTo(s: TestServer, to: string): Promise<any[]> {
  const r = await s.admin('GET', `/sandbox/messages?to=${encodeURIComponent(to)}&limit=100`);
  expect(r.status, r.text).toBe(200);
  return r.body.data;
}

/** Every caught mail carrying the /v1 message `id` (reads up to 100 newest). */
export async function caughtOf(s: TestServer, id: string): Promise<any[]> {
  const out: any[] = [];
  let after: string | undefined;
  for (;;) {
    const r = await s.admin('GET', `/sandbox/messages?limit=100${after ? `&after=${after}` : ''}`);
    expect(r.status, r.text).toBe(200);
    out.push(...r.body.data.filter((m: { message_id: string | null }) => m.message_id === id));
    if (!r.body.has_more) return out;
    after = r.body.data[r.body.data.length - 1].id;
  }
}

/** The one caught message of /v1 message `id`, in full (GET /sandbox/messages/{id}). */
export async function caughtDetail(s: TestServer, id: string): Promise<any> {
  const list = await caughtOf(s, id);
  expect(list, `caught messages of ${id}`).toHaveLength(1);
  const r = await s.admin('GET', `/sandbox/messages/${list[0].id}`);
  expect(r.status, r.text).toBe(200);
  return r.body;
}

/** A header value of a caught message (first match, case-insensitive). */
export function header(m: { headers: { name: string; value: string }[] }, name: string): string | undefined {
  return m.headers.find((h) => h.name.toLowerCase() === name.toLowerCase())?.value;
}

export interface OutboxEvent {
  id: string;
  type: string;
  message_id: string | null;
  data: Record<string, any>;
  created_at: number;
}

/** The events outbox of a workspace (oldest first), optionally only those of one message. */
export function outbox(s: TestServer, workspaceId: string, messageId?: string): OutboxEvent[] {
  const rows = s.core.events.outbox(workspaceId, { limit: 100_000 });
  return rows
    .filter((e) => messageId === undefined || e.message_id === messageId)
    .map((e) => ({
      id: e.id,
      type: e.type,
      message_id: e.message_id,
      data: e.data,
      created_at: e.created_at,
    }));
}

/** Adds a domain (not published). */
export async function addDomain(s: TestServer, token: string, name: string) {
  const r = await s.call('POST', '/v1/domains', { token, body: { name } });
  expect(r.status, r.text).toBe(201);
  expect(r.body.status).toBe('pending');
  return r.body as { id: string; name: string; status: string };
}

/** Publishes a domain's records in the sandbox zone and verifies it (expects `verified: true`). */
export async function publishAndVerify(s: TestServer, token: string, domainId: string) {
  const p = await s.admin('POST', `/sandbox/domains/${domainId}/publish`, {});
  expect(p.status, p.text).toBe(200);
  const v = await s.call('POST', `/v1/domains/${domainId}/verify`, { token });
  expect(v.status, v.text).toBe(200);
  expect(v.body.verified, v.text).toBe(true);
  expect(v.body.status).toBe('verified');
  return v.body;
}
