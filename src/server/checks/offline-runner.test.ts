// The offline checks on their two threads (as svc serve runs them) answer what they answer on the caller's thread; the
// threads a sandbox starts before its first message are shared by the runners of a process.
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { readFileSync } from 'node:fs';
import type { Worker } from 'node:worker_threads';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../lib/log.js';
import { createOfflineRunner, type OfflineRunner } from './offline-runner.js';

const fixture = (name: string) => readFileSync(new URL(`../../../fixtures/checks/${name}`, import.meta.url), 'utf8');

describe('the offline checks on their threads', () => {
  it('answer as on the caller’s thread, html-validate’s findings merged in', async () => {
    const input = {
      html: fixture('promo-no-alt.html'),
      sentHtmlBytes: 1000,
      text: null,
      subject: 'Weekend sale',
      from: 'deals@example.test',
      headers: [],
    };
    const threads = createOfflineRunner({ thread: true, log: silentLogger });
    const here = createOfflineRunner({ thread: false, log: silentLogger });
    try {
      const [a, b] = await Promise.all([threads.run(input), here.run(input)]);
      expect(a).toEqual(b);
      const rules = (o: typeof a.accessibility) => (o && 'ok' in o ? o.ok.map((f) => f.rule) : []);
      // html-validate's part (an image link without text) came from the other thread.
      expect(rules(a.accessibility)).toContain('html-validate/wcag/h30');
      expect(a.urls.length).toBeGreaterThan(0);
      // Only the URLs, for the links check run again.
      expect(await threads.run({ ...input, only: 'urls' })).toMatchObject({ compatibility: null, urls: a.urls });
    } finally {
      await threads.close();
      await here.close();
    }
  });
});

describe('the threads started ahead of the first message (warm)', () => {
  const input = {
    html: '<!doctype html><html lang="en"><head><title>Welcome</title></head><body><p>Hi</p></body></html>',
    sentHtmlBytes: 100,
    text: 'Hi',
    subject: 'Welcome',
    from: 'hello@example.test',
    headers: [],
  };
  // Node says each thread it starts on this channel.
  const threads: Worker[] = [];
  const started = (m: unknown) => threads.push((m as { worker: Worker }).worker);
  beforeEach(() => {
    threads.length = 0;
    subscribe('worker_threads', started);
  });
  afterEach(() => void unsubscribe('worker_threads', started));
  const running = (ws: Worker[]) => ws.filter((w) => w.threadId !== -1).length;

  it('are one pair for runners warmed side by side, taken by the first message of one, started again by a later warm', async () => {
    const [a, b] = [1, 2].map(() => createOfflineRunner({ thread: true, log: silentLogger })) as [
      OfflineRunner,
      OfflineRunner,
    ];
    try {
      await Promise.all([a.warm(), b.warm()]);
      expect(threads).toHaveLength(2);
      expect((await a.run(input)).compatibility).toHaveProperty('ok');
      expect(threads, 'a took the pair').toHaveLength(2);
      await b.run(input);
      expect(threads, 'none was left for b').toHaveLength(4);
      const c = createOfflineRunner({ thread: true, log: silentLogger });
      await c.warm();
      expect(threads).toHaveLength(6);
      await c.close();
      expect(running(threads.slice(4)), 'a held them still').toBe(2);
    } finally {
      await a.close();
      await b.close();
    }
    expect(running(threads)).toBe(0);
  });

  it('end with the last runner that warmed, when no message took them', async () => {
    const a = createOfflineRunner({ thread: true, log: silentLogger });
    const warming = a.warm();
    expect(threads).toHaveLength(2);
    await a.close();
    await warming;
    expect(running(threads)).toBe(0);
    // A runner closed is warmed no more.
    await a.warm();
    expect(threads).toHaveLength(2);
  });
});
