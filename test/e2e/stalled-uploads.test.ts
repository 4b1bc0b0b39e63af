// The real binary under 100 uploads that stop midway: its resident memory stays within 100 MB of idle (the body
// budget caps what it buffers) and it keeps answering. Timeouts and the Problems involved: test/integration/hostile-clients.test.ts.
import { readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, killAll, serve, stop, type Served } from '../helpers/binary.js';

const MiB = 1024 * 1024;

/** The server process's resident set, from /proc. */
function rss(s: Served): number {
  const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${s.proc.pid}/status`, 'utf8'))![1]!;
  return Number(kb) * 1024;
}

describe('svc serve under stalled uploads', () => {
  let s: Served;
  const sockets: Socket[] = [];
  beforeAll(async () => {
    ensureBuilt();
    s = await serve(['--memory']);
  }, 120_000);
  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    if (s) await stop(s);
    killAll();
  });

  const send = () =>
    fetch(`${s.ready.api}/emails`, {
      method: 'POST',
      headers: { authorization: `Bearer ${s.ready.seed!.api_key_test}`, 'content-type': 'application/json' },
      body: JSON.stringify({ from: 'orders@example.test', to: 'someone@example.com', subject: 'Hi', text: 'Hello' }),
    });

  it('100 stalled uploads leave RSS within 100 MB of idle and the server answering', async () => {
    const port = Number(new URL(s.ready.api).port);
    expect((await send()).status).toBe(202);
    const idle = rss(s);

    const raw = (head: string, body: Buffer) => {
      const socket = connect(port, '127.0.0.1');
      let received = '';
      socket.setEncoding('latin1').on('data', (d: string) => (received += d));
      socket.on('error', () => {});
      socket.write(head);
      socket.write(body);
      sockets.push(socket);
      return () => received;
    };
    // 50 sign-ins with 60 KiB of a chunked body sent; 25 sends declaring 40 MiB and 25 chunked ones, each with 2 MiB
    // of its body sent: then nothing more.
    const chunked = (bytes: Buffer) => Buffer.concat([Buffer.from(`${bytes.length.toString(16)}\r\n`), bytes]);
    const head = (path: string, framing: string, auth = '') =>
      `POST ${path} HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: application/json\r\n${framing}\r\n\r\n`;
    const auth = `Authorization: Bearer ${s.ready.seed!.api_key_test}\r\n`;
    const chunk60k = Buffer.alloc(60 * 1024, 0x20);
    for (let i = 0; i < 50; i++) raw(head('/v1/auth/login', 'Transfer-Encoding: chunked'), chunked(chunk60k));
    const twoMiB = Buffer.alloc(2 * MiB, 0x20);
    const sends = [
      ...Array.from({ length: 25 }, () => raw(head('/v1/emails', `Content-Length: ${40 * MiB}`, auth), twoMiB)),
      ...Array.from({ length: 25 }, () => raw(head('/v1/emails', 'Transfer-Encoding: chunked', auth), chunked(twoMiB))),
    ];
    // The send bodies are more than the server buffers at once: refusals (429) show it has filled up.
    await expect
      .poll(() => sends.filter((r) => r().startsWith('HTTP/1.1 429')).length, { timeout: 15_000 })
      .toBeGreaterThan(0);

    const started = Date.now();
    expect((await fetch(`${s.ready.api}/openapi.json`)).status).toBe(200);
    expect((await send()).status).toBe(202);
    const answeredIn = Date.now() - started;
    const peak = rss(s);
    console.log(
      `stalled uploads: server RSS idle ${Math.round(idle / MiB)} MiB, with 100 uploads stalled ${Math.round(peak / MiB)} MiB ` +
        `(+${Math.round((peak - idle) / MiB)} MiB); a read and a send answered in ${answeredIn} ms`,
    );
    expect(peak - idle).toBeLessThan(100 * 1000 * 1000);
  }, 60_000);
});
