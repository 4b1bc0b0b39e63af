// svc-mail/testing's inbox.check, as an app's test uses it: send, wait for the mail, then assert on its checks' findings.
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { readFileSync } from 'node:fs';
import type { Worker } from 'node:worker_threads';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Sandbox, startSandbox } from '../../src/testing/index.js';
import { type Site, startSite } from '../helpers/site.js';

describe('sb.inbox.check', () => {
  let sb: Sandbox;
  let site: Site;
  beforeAll(async () => {
    site = await startSite();
    // The app's links point at its own server on this machine.
    sb = await startSandbox({ checkPrivateLinks: true });
  });
  afterAll(async () => {
    await sb?.close();
    await site?.close();
  });

  it('answers the report of a caught message, by the message or its id, kept until asked to refresh the links', async () => {
    const waiting = sb.inbox.waitFor({ to: 'ada@example.org' });
    await sb.client.call('sendEmail', {
      body: {
        from: 'The Shop <orders@example.test>',
        to: 'ada@example.org',
        subject: 'Your receipt',
        html: readFileSync(new URL('../../fixtures/checks/receipt.html', import.meta.url), 'utf8').replace(
          'https://shop.example.test/orders/1042',
          `${site.origin}/gone`,
        ),
        text: `View your order: ${site.origin}/gone`,
      },
    });
    const m = await waiting;
    const report = await sb.inbox.check(m);
    expect(report.message_id).toBe(m.id);
    const errors = report.checks.flatMap((c) => c.findings.filter((f) => f.severity === 'error'));
    expect(errors).toEqual([expect.objectContaining({ rule: 'link-broken', url: `${site.origin}/gone`, status: 404 })]);
    expect(report.checks.find((c) => c.id === 'authentication')?.status).toBe('ok');

    expect(await sb.inbox.check(m.id)).toEqual(report);
    const heads = () => site.requests.filter((r) => r === 'HEAD /gone').length;
    const asked = heads();
    await sb.clock.advance('10m');
    const again = await sb.inbox.check(m.id, { refresh: 'links' });
    expect(heads()).toBe(asked + 1);
    expect(again.checked_at).toBe(report.checked_at);
  });

  it("loads the checks once started, in the background: a sandbox's first check starts no thread", async () => {
    // Node says each thread it starts on this channel.
    const threads: Worker[] = [];
    const started = (m: unknown) => threads.push((m as { worker: Worker }).worker);
    subscribe('worker_threads', started);
    const box = await startSandbox();
    try {
      const waiting = box.inbox.waitFor({ to: 'bo@example.org' });
      await box.client.call('sendEmail', {
        body: {
          from: 'The Shop <orders@example.test>',
          to: 'bo@example.org',
          subject: 'Welcome to the shop',
          html: '<!doctype html><html lang="en"><head><title>Welcome</title></head><body><p>Your code is <b>482913</b>.</p></body></html>',
          text: 'Your code is 482913.',
        },
      });
      const m = await waiting;
      const before = threads.length;
      const report = await box.inbox.check(m);
      const ran = report.checks.filter((c) => ['html-compatibility', 'content', 'accessibility'].includes(c.id));
      expect(ran.map((c) => c.status)).not.toContain('skipped');
      expect(threads.length, 'threads the first check started').toBe(before);
    } finally {
      unsubscribe('worker_threads', started);
      await box.close();
    }
  });
});
