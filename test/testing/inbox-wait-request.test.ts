// A wait for caught mail is one request the server holds (POST /sandbox/messages/wait, client/inbox-wait.ts): no
// stream, listing or claim of its own. The client reaches the sandbox through a TCP proxy of this test's, which counts
// the requests it sends and can cut the connection as a network or a server that dies would.
import { createServer, type Server, type Socket, connect } from 'node:net';
import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError, ConnectionError } from '../../src/client/errors.js';
import { createClient } from '../../src/client/index.js';
import { ServerStopped, waitForMessage } from '../../src/client/inbox-wait.js';
import { startSandbox, type Sandbox } from '../../src/testing/index.js';

let sb: Sandbox;
let proxy: Server;
const sockets = new Set<Socket>();
/** The method and path of each request the client sent, in order. */
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
    asked.push(`${opts.method} ${String(opts.path)}`);
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
const realClock = { now: Date.now, sleep: (ms: number) => new Promise<void>((r) => setTimeout(r, ms)) };
const wait = (c: typeof client, to: string) =>
  waitForMessage(c, { to, since: new Date(0).toISOString(), timeoutMs: 10_000, clock: realClock });

describe('a wait for caught mail', () => {
  it('is one request, whether the mail was caught before it or comes while it is held; two at once each take theirs', async () => {
    await send('before@example.org');
    let from = asked.length;
    expect(await wait(client, 'before@example.org')).toMatchObject({ to: ['before@example.org'], claimed: true });
    expect(asked.slice(from)).toEqual(['POST /sandbox/messages/wait']);

    from = asked.length;
    const held = wait(client, 'held@example.org');
    await send('held@example.org');
    expect(await held).toMatchObject({
      to: ['held@example.org'],
      claimed: true,
      text: 'Your code for held@example.org\n',
    });
    expect(asked.slice(from)).toEqual(['POST /sandbox/messages/wait']);

    const [a, b] = [wait(client, 'both-a@example.org'), wait(client, 'both-b@example.org')];
    await send('both-b@example.org');
    await send('both-a@example.org');
    expect([(await a)?.to, (await b)?.to]).toEqual([['both-a@example.org'], ['both-b@example.org']]);
  });

  it("fails with the connection's error when the connection is cut while it is held, without asking again", async () => {
    const held = wait(client, 'never@example.org');
    // Held on the server: the request has been sent.
    await expect.poll(() => asked.at(-1)).toBe('POST /sandbox/messages/wait');
    const from = asked.length;
    for (const s of sockets) s.destroy();
    await expect(held).rejects.toBeInstanceOf(ConnectionError);
    expect(asked.length).toBe(from);
  });

  it('ends with ServerStopped when the server stops while it is held', async () => {
    const other = await startSandbox({ clock: 'real' });
    const c = createClient({ baseUrl: other.apiUrl, adminToken: other.adminToken });
    const ended = expect(wait(c, 'stopping@example.org')).rejects.toBeInstanceOf(ServerStopped);
    // Two requests sent after the wait's, one after the other: the second is answered once the wait is held.
    for (let i = 0; i < 2; i++) await c.sandbox('getClock');
    await other.close();
    await ended;
  });

  it("ends svc-mail/testing's waitFor with what happened when the sandbox is closed while it is held", async () => {
    const other = await startSandbox({ clock: 'real' });
    const ended = expect(other.inbox.waitFor({ to: 'closing@example.org' })).rejects.toThrow(
      'inbox.waitFor: the sandbox was closed while waiting for mail',
    );
    // Two requests sent after the wait's, one after the other: the second is answered once the wait is held.
    for (let i = 0; i < 2; i++) await other.client.sandbox('getClock');
    await other.close();
    await ended;
  });

  it('is refused for a hold longer than a minute (422) and a workspace no workspace has (404)', async () => {
    const ask = (body: object) =>
      sb.client.sandbox('waitForMessage', { body: body as never }).catch((err: unknown) => err as ApiError);
    const long = await ask({ to: 'x@example.org', wait: 61 });
    expect(long).toBeInstanceOf(ApiError);
    expect(long).toMatchObject({ status: 422, code: 'validation_failed' });
    expect(await ask({ workspace: 'Nobody at all' })).toMatchObject({ status: 404, code: 'not_found' });
    expect((await sb.client.sandbox('waitForMessage', { body: { to: 'none@example.org' } })).body).toEqual({
      message: null,
    });
  });
});
