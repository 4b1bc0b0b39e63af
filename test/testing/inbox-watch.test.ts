// The inbox stream shared by a client's waits (client/inbox-wait.ts createInboxWatch, which svc-mail/testing's sandbox
// uses): one stream for many waits, each wait hearing the mail caught after it began, and a stream cut off ending the
// waits on it while the next wait opens another. The client reaches the sandbox through a TCP proxy of this test's,
// so the test can cut the stream as a network or a server that dies would, and counts the stream requests it sends.
import { createServer, type Server, type Socket, connect } from 'node:net';
import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConnectionError } from '../../src/client/errors.js';
import { createClient } from '../../src/client/index.js';
import { createInboxWatch, InboxStreamEnded, type InboxWatch, waitForMessage } from '../../src/client/inbox-wait.js';
import { startSandbox, type Sandbox } from '../../src/testing/index.js';

let sb: Sandbox;
let proxy: Server;
const sockets = new Set<Socket>();
/** The paths of the requests the client sent, in order. */
const asked: string[] = [];
let client: ReturnType<typeof createClient>;

beforeAll(async () => {
  sb = await startSandbox({ clock: 'real' });
  const target = new URL(sb.apiUrl);
  proxy = createServer((inbound) => {
    const outbound = connect(Number(target.port), target.hostname);
    for (const s of [inbound, outbound]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => {});
    }
    inbound.pipe(outbound).pipe(inbound);
    inbound.on('close', () => outbound.destroy());
    outbound.on('close', () => inbound.destroy());
  });
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
  const { port } = proxy.address() as { port: number };
  const dispatcher = new Agent().compose((dispatch) => (opts, handler) => {
    asked.push(String(opts.path));
    return dispatch(opts, handler);
  });
  client = createClient({ baseUrl: `http://127.0.0.1:${port}/v1`, adminToken: sb.adminToken, dispatcher });
});
afterAll(async () => {
  for (const s of sockets) s.destroy();
  await new Promise((r) => proxy?.close(r));
  await sb?.close();
});

const send = (to: string) =>
  sb.client.call('sendEmail', {
    body: { from: 'Shop <orders@example.test>', to, subject: 'Your code', text: `Your code for ${to}` },
  });
const wait = (watch: InboxWatch | undefined, to: string, onWaiting?: () => void) =>
  waitForMessage(client, {
    to,
    since: new Date(0).toISOString(),
    timeoutMs: 10_000,
    clock: { now: Date.now, sleep: (ms) => new Promise((r) => setTimeout(r, ms)) },
    watch,
    onWaiting,
  });
/** A wait for mail to `to` that nobody sends, and when it is on the stream (nothing caught was taken). */
function waitOnStream(watch: InboxWatch, to: string) {
  let onStream!: () => void;
  const listening = new Promise<void>((r) => {
    onStream = r;
  });
  return { waiting: wait(watch, to, onStream), listening };
}
const streams = () => asked.filter((p) => p.startsWith('/sandbox/stream')).length;

describe('the inbox stream shared by waits', () => {
  it('serves every wait of a client with one stream, where each wait alone opens its own', async () => {
    const before = streams();
    for (const to of ['alone-1@example.org', 'alone-2@example.org']) {
      const waiting = wait(undefined, to);
      await send(to);
      expect((await waiting)?.to).toEqual([to]);
    }
    expect(streams() - before).toBe(2);

    const watch = createInboxWatch(client);
    try {
      const shared = streams();
      // Sent after the wait began (heard on the stream), and before it (found by the listing).
      for (const to of ['shared-1@example.org', 'shared-2@example.org', 'shared-3@example.org']) {
        const waiting = wait(watch, to);
        await send(to);
        expect((await waiting)?.to).toEqual([to]);
      }
      await send('shared-4@example.org');
      expect((await wait(watch, 'shared-4@example.org'))?.to).toEqual(['shared-4@example.org']);
      // Two at once on the one stream, each taking its own.
      const [a, b] = [wait(watch, 'both-a@example.org'), wait(watch, 'both-b@example.org')];
      await send('both-b@example.org');
      await send('both-a@example.org');
      expect([(await a)?.to, (await b)?.to]).toEqual([['both-a@example.org'], ['both-b@example.org']]);
      expect(streams() - shared).toBe(1);
    } finally {
      watch.close();
    }
  });

  it("a stream cut off ends the waits on it with the connection's error; the next wait opens another", async () => {
    const watch = createInboxWatch(client);
    try {
      const cut = waitOnStream(watch, 'never@example.org');
      await cut.listening;
      for (const s of sockets) s.destroy();
      await expect(cut.waiting).rejects.toBeInstanceOf(ConnectionError);

      const before = streams();
      const waiting = wait(watch, 'after-cut@example.org');
      await send('after-cut@example.org');
      expect((await waiting)?.to).toEqual(['after-cut@example.org']);
      expect(streams() - before).toBe(1);
    } finally {
      watch.close();
    }
  });

  it('close() ends a wait on the watch, and a wait after it is refused', async () => {
    const watch = createInboxWatch(client);
    const closed = waitOnStream(watch, 'closed@example.org');
    await closed.listening;
    watch.close();
    await expect(closed.waiting).rejects.toBeInstanceOf(InboxStreamEnded);
    await expect(wait(watch, 'closed@example.org')).rejects.toBeInstanceOf(InboxStreamEnded);
  });
});
