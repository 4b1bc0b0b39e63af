// GET /metrics (docs/local-server.md#metrics): Prometheus' text format from a real server — the database's counters by
// workspace (and after a restart), the job queues, webhook failures, the mail listeners' connections from real SMTP
// clients, request durations by route pattern; who may read it (the admin token, or anyone under --metrics-open on a
// loopback host only).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import nodemailer from 'nodemailer';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { checkOptions, ServeUsageError } from '../../src/server/options.js';
import { expectProblem } from '../helpers/problems.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { smtpTalk } from '../helpers/smtp.js';

const FROM = 'Shop <orders@example.test>';

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The exposition parsed line by line: its samples, and each metric's HELP and TYPE. */
function parse(text: string) {
  const samples: Sample[] = [];
  const help = new Map<string, string>();
  const type = new Map<string, string>();
  for (const line of text.split('\n')) {
    if (!line) continue;
    const meta = /^# (HELP|TYPE) (\S+) (.*)$/.exec(line);
    if (meta) {
      (meta[1] === 'HELP' ? help : type).set(meta[2]!, meta[3]!);
      continue;
    }
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]!] = l[2]!;
    samples.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return {
    samples,
    help,
    type,
    /** The value of the one sample of `name` whose labels include `labels` (undefined: none). */
    value(name: string, labels: Record<string, string> = {}): number | undefined {
      const found = samples.filter(
        (s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v),
      );
      if (found.length > 1) throw new Error(`${found.length} samples of ${name} match ${JSON.stringify(labels)}`);
      return found[0]?.value;
    },
  };
}

async function scrape(s: TestServer, token: string | null = s.adminToken) {
  const r = await s.call('GET', '/metrics', { token });
  expect(r.status, r.text).toBe(200);
  expect(r.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return parse(r.text);
}

async function send(s: TestServer, to: string, extra: Record<string, unknown> = {}): Promise<string> {
  const r = await s.call('POST', '/v1/emails', {
    token: s.seed!.api_key_test,
    body: { from: FROM, to, subject: 'Metrics', text: 'Hi', ...extra },
  });
  expect(r.status, r.text).toBe(202);
  return r.body.id;
}

describe('GET /metrics', () => {
  let s: TestServer;
  let rx: Receiver;
  beforeAll(async () => {
    s = await startTestServer({ webhookTimeoutMs: 1_500 });
    rx = await startReceiver(() => 500);
  });
  afterAll(async () => {
    await s?.close();
    await rx?.close();
  });

  it('counts by workspace what was accepted, caught, delivered, bounced; webhook failures; queues; requests by route', async () => {
    const ws = s.seed!.workspace_id;
    const before = await scrape(s);
    const r = await s.admin('POST', '/sandbox/webhooks', {
      workspace_id: ws,
      url: rx.url,
      events: ['email.delivered'],
    });
    expect(r.status, r.text).toBe(201);
    const ids = [
      await send(s, 'delivered@simulator.test'),
      await send(s, 'delivered@simulator.test'),
      await send(s, 'bounce@simulator.test'),
    ];
    await s.settle();
    // The two email.delivered events' first attempts, answered 500, are recorded once the receiver has had them.
    await rx.waitFor(2);
    await s.settle();
    // A send scheduled an hour on: a job that waits in the default queue.
    await send(s, 'delivered@simulator.test', { scheduled_at: new Date(s.clock.now() + 3600_000).toISOString() });
    expect((await s.call('GET', `/v1/emails/${ids[0]}`, { token: s.seed!.api_key_test })).status).toBe(200);

    const m = await scrape(s);
    expect(m.value('svc_messages_accepted_total', { workspace: ws })).toBe(4);
    expect(m.value('svc_messages_caught_total', { workspace: ws })).toBe(3);
    expect(m.value('svc_messages_delivered_total', { workspace: ws })).toBe(2);
    expect(m.value('svc_messages_bounced_total', { workspace: ws })).toBe(1);
    expect(m.value('svc_messages_failed_total', { workspace: ws })).toBeUndefined();
    expect(m.value('svc_webhook_attempts_total', { workspace: ws })).toBe(2);
    expect(m.value('svc_webhook_failures_total', { workspace: ws })).toBe(2);
    // Both deliveries wait 30 s for their second attempt; the scheduled send waits its hour; none is due yet.
    expect(m.value('svc_queue_jobs', { queue: 'webhook' })).toBe(2);
    expect(m.value('svc_queue_jobs', { queue: 'default' })).toBe(
      before.value('svc_queue_jobs', { queue: 'default' })! + 1,
    );
    expect(m.value('svc_queue_oldest_due_seconds', { queue: 'webhook' })).toBe(0);
    expect(m.type.get('svc_messages_accepted_total')).toBe('counter');
    expect(m.type.get('svc_queue_jobs')).toBe('gauge');

    // Requests by route pattern, never the path asked: three sends answered 202 (and the fourth, scheduled).
    const post = { method: 'POST', route: '/v1/emails', code: '202' };
    expect(m.value('svc_http_request_duration_seconds_bucket', { ...post, le: '+Inf' })).toBe(4);
    expect(m.value('svc_http_request_duration_seconds_count', post)).toBe(4);
    expect(m.value('svc_http_request_duration_seconds_bucket', { ...post, le: '30' })).toBe(4);
    expect(
      m.value('svc_http_request_duration_seconds_count', { method: 'GET', route: '/v1/emails/{id}', code: '200' }),
    ).toBe(1);
    expect(m.samples.filter((x) => JSON.stringify(x.labels).includes(ids[0]!))).toEqual([]);
    expect(m.type.get('svc_http_request_duration_seconds')).toBe('histogram');

    // Every series of svc's has help text, and node's process metrics are there too.
    for (const name of new Set(m.samples.map((x) => x.name.replace(/_(bucket|sum|count)$/, '')))) {
      if (name.startsWith('svc_')) expect(m.help.get(name), name).toMatch(/\w/);
    }
    expect(m.value('process_cpu_user_seconds_total')).toBeGreaterThanOrEqual(0);
  });

  it('counts the SMTP connections real clients open on the sink and on submission, and those open now', async () => {
    const sink = { protocol: 'smtp', listener: 'sink' };
    const submission = { protocol: 'smtp', listener: 'submission' };
    const before = await scrape(s);
    const t = nodemailer.createTransport({ host: '127.0.0.1', port: s.smtpPort, secure: false, ignoreTLS: true });
    await t.sendMail({ from: 'app@example.org', to: 'someone@example.org', subject: 'Direct', text: 'Hi' });
    t.close();
    const talk = await smtpTalk(s.submissionPort!);
    expect(await talk.reply()).toMatch(/^220 /);

    const during = await scrape(s);
    expect(during.value('svc_connections_opened_total', sink)).toBe(
      (before.value('svc_connections_opened_total', sink) ?? 0) + 1,
    );
    expect(during.value('svc_connections_opened_total', submission)).toBe(1);
    expect(during.value('svc_connections_open', submission)).toBe(1);
    // Mail caught from a client that named no workspace.
    expect(during.value('svc_messages_caught_total', { workspace: 'none' })).toBe(1);

    talk.write('QUIT\r\n');
    await talk.closed;
    // The server's side of the socket closes once it has written its 221: the gauge goes down then.
    await vi.waitFor(async () => {
      const after = await scrape(s);
      expect(after.value('svc_connections_open', submission)).toBe(0);
      expect(after.value('svc_connections_open', sink)).toBe(0);
    });
  });

  it('counts the POP3 and IMAP connections of mail clients, and those open now', async () => {
    const { connect } = await import('node:net');
    const greeted = (port: number) =>
      new Promise<import('node:net').Socket>((resolve) => {
        const socket = connect(port, '127.0.0.1');
        socket.once('data', () => resolve(socket));
      });
    const pop3 = await greeted(s.pop3Port!);
    const imap = await greeted(s.imapPort!);
    const during = await scrape(s);
    for (const protocol of ['pop3', 'imap']) {
      expect(during.value('svc_connections_opened_total', { protocol, listener: protocol })).toBe(1);
      expect(during.value('svc_connections_open', { protocol, listener: protocol })).toBe(1);
    }
    pop3.end('QUIT\r\n');
    imap.end('a LOGOUT\r\n');
    await vi.waitFor(async () => {
      const after = await scrape(s);
      expect(after.value('svc_connections_open', { protocol: 'pop3', listener: 'pop3' })).toBe(0);
      expect(after.value('svc_connections_open', { protocol: 'imap', listener: 'imap' })).toBe(0);
    });
  });

  it('without the admin token: 401 Problem, as every sandbox route', async () => {
    const none = await s.call('GET', '/metrics');
    expectProblem(none, 401, 'missing_credentials');
    expect(none.headers.get('www-authenticate')).toBe('Bearer');
    expectProblem(await s.call('GET', '/metrics', { token: s.seed!.api_key_test }), 401, 'invalid_token');
  });
});

describe('--metrics-open', () => {
  it('on a loopback host, answers without a token', async () => {
    const s = await startTestServer({ metricsOpen: true });
    try {
      const m = await scrape(s, null);
      expect(m.value('svc_queue_jobs', { queue: 'default' })).toBeGreaterThanOrEqual(0);
    } finally {
      await s.close();
    }
  });

  it('on a host that is not loopback, refuses to start, saying why', async () => {
    expect(() => checkOptions({ host: '0.0.0.0', allowInsecureHttp: true, metricsOpen: true })).toThrow(
      /Refusing --metrics-open on 0\.0\.0\.0, which is not a loopback address/,
    );
    expect(() => checkOptions({ host: '0.0.0.0', allowInsecureHttp: true, metricsOpen: true })).toThrow(
      ServeUsageError,
    );
    expect(() => checkOptions({ host: '::1', metricsOpen: true })).not.toThrow();
    await expect(startTestServer({ host: '192.0.2.1', allowInsecureHttp: true, metricsOpen: true })).rejects.toThrow(
      ServeUsageError,
    );
  });
});

describe('after a restart', () => {
  it('the counts the database holds are the same; what only the process saw starts at zero', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'svc-metrics-'));
    try {
      let s = await startTestServer({ dataDir });
      await send(s, 'delivered@simulator.test');
      await s.settle();
      const ws = s.seed!.workspace_id;
      expect((await scrape(s)).value('svc_messages_delivered_total', { workspace: ws })).toBe(1);
      await s.close();
      s = await startTestServer({ dataDir });
      try {
        const m = await scrape(s);
        expect(m.value('svc_messages_accepted_total', { workspace: ws })).toBe(1);
        expect(m.value('svc_messages_delivered_total', { workspace: ws })).toBe(1);
        expect(m.value('svc_messages_caught_total', { workspace: ws })).toBe(1);
        expect(m.value('svc_http_request_duration_seconds_count', { method: 'POST', route: '/v1/emails' })).toBe(
          undefined,
        );
      } finally {
        await s.close();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
