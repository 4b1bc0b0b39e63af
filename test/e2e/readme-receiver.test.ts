// The webhook receiver of docs/api.md, run as written: it imports `svc-mail` (the built package's public entry) and must accept a
// signed delivery once per event id, and refuse a forged body, a stale timestamp and a missing signature.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newWebhookSecret, signWebhook } from '../../src/contract/signature.js';
import { ensureBuilt, ROOT } from '../helpers/binary.js';

/** The code block after the `<!-- receiver -->` marker of docs/api.md. */
function receiverSource(): string {
  const doc = readFileSync(join(ROOT, 'docs', 'api.md'), 'utf8');
  const block = /<!-- receiver -->\s*```js\n([\s\S]*?)```/.exec(doc);
  if (!block) throw new Error('docs/api.md has no receiver example after <!-- receiver -->');
  return block[1]!;
}

const freePort = () =>
  new Promise<number>((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });

describe('the webhook receiver of docs/api.md', () => {
  const secret = newWebhookSecret();
  let proc: ChildProcess;
  let out = '';
  let url = '';
  beforeAll(async () => {
    ensureBuilt();
    // Inside the package, so that `import … from 'svc-mail'` resolves to the package itself.
    const dir = join(ROOT, 'test-artifacts', 'readme');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'receiver.mjs'), receiverSource());
    const port = await freePort();
    url = `http://127.0.0.1:${port}/`;
    proc = spawn(process.execPath, [join(dir, 'receiver.mjs')], {
      env: { ...process.env, WEBHOOK_SECRET: secret, PORT: String(port) },
    });
    proc.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
    // Ready once it listens: it prints nothing until then, so wait for the port to take a connection.
    await new Promise<void>((resolve, reject) => {
      const deadline = Date.now() + 10_000;
      const attempt = () =>
        fetch(url, { method: 'POST', body: '{}' }).then(
          () => resolve(),
          () =>
            Date.now() > deadline ? reject(new Error(`the receiver did not listen: ${out}`)) : setImmediate(attempt),
        );
      attempt();
    });
  }, 60_000);
  afterAll(() => proc?.kill());

  const deliver = (body: string, header?: string) =>
    fetch(url, { method: 'POST', body, headers: header === undefined ? {} : { 'service-signature': header } });
  const event = JSON.stringify({
    id: 'evt_ReadmeReceiver0000000001',
    type: 'email.delivered',
    created_at: new Date().toISOString(),
    api_version: '2026-08-01',
    data: {},
  });

  it('accepts a signed delivery and handles each event id once', async () => {
    expect((await deliver(event, signWebhook({ secret, body: event }))).status).toBe(204);
    expect((await deliver(event, signWebhook({ secret, body: event }))).status).toBe(204);
    await expect.poll(() => out).toContain('email.delivered evt_ReadmeReceiver0000000001');
    expect(out.match(/evt_ReadmeReceiver0000000001/g)).toHaveLength(1);
  });

  it('refuses a changed body, a stale timestamp, another secret and a missing signature', async () => {
    const forged = await deliver(event.replace('delivered', 'bounced'), signWebhook({ secret, body: event }));
    expect([forged.status, await forged.text()]).toEqual([400, expect.stringMatching(/No signature/)]);
    const stale = await deliver(
      event,
      signWebhook({ secret, body: event, timestamp: Math.floor(Date.now() / 1000) - 301 }),
    );
    expect([stale.status, await stale.text()]).toEqual([400, expect.stringMatching(/tolerance/)]);
    expect((await deliver(event, signWebhook({ secret: newWebhookSecret(), body: event }))).status).toBe(400);
    expect((await deliver(event)).status).toBe(400);
  });
});
