import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect, it } from 'vitest';
import { loadUndici } from './undici.js';

it("leaves Node's own fetch on its own dispatcher: a fetch with its own Content-Length still goes through", async () => {
  const server = createServer((req, res) => {
    let n = 0;
    req.on('data', (c: Buffer) => (n += c.length)).on('end', () => res.end(String(n)));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  try {
    const { Agent, request } = await loadUndici();
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    const answer = await fetch(url, { method: 'POST', headers: { 'content-length': '2' }, body: '{}' });
    expect(await answer.text()).toBe('2');
    // And the package works beside it, with an agent of its own.
    const agent = new Agent();
    const res = await request(url, { method: 'POST', body: 'abc', dispatcher: agent });
    expect(await res.body.text()).toBe('3');
    await agent.close();
  } finally {
    server.close();
  }
});
