// svc webhooks verify: the raw body on stdin, the signature checked with the contract's signing module; no service,
// no credential. "valid" and exit 0, or the reason and exit 1.
import { describe, expect, it } from 'vitest';
import { signWebhook } from '../../src/contract/signature.js';
import { webhooksVerifyRun, type WebhooksVerifyOptions } from '../../src/cli/commands/webhooks/verify.js';
import { createContext } from '../../src/cli/context.js';
import { EXIT, reportError } from '../../src/cli/errors.js';
import { testIO } from './helpers.js';

const secret = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
const body =
  '{"id":"evt_1","type":"email.delivered","created_at":"2026-08-01T12:00:00.000Z","api_version":"2026-08-01","data":{"to":"zoë@example.org"}}';

async function verify(o: WebhooksVerifyOptions, stdin: string | Buffer, extra: { json?: boolean; tty?: boolean } = {}) {
  const t = await testIO({ stdin: stdin as string, tty: extra.tty });
  const ctx = createContext({ io: t.io, globals: { json: extra.json } });
  let code: number = EXIT.ok;
  try {
    await webhooksVerifyRun(ctx, o);
  } catch (err) {
    code = await reportError(t.io, err, { command: 'svc webhooks verify', json: extra.json });
  }
  return { code, stdout: t.stdout(), stderr: t.stderr() };
}

describe('svc webhooks verify', () => {
  it('prints "valid" for a delivery signed with the secret (exit 0), and nothing on stderr', async () => {
    const r = await verify({ secret, signature: signWebhook({ secret, body }) }, body);
    expect(r).toEqual({ code: 0, stdout: 'valid\n', stderr: '' });
  });

  it('accepts a header carrying two signatures during a rotation, when either is made with the secret', async () => {
    const r = await verify({ secret, signature: signWebhook({ secret: ['whsec_new', secret], body }) }, body);
    expect(r.code).toBe(0);
  });

  it('checks the bytes received: a body that is not UTF-8 verifies byte for byte', async () => {
    const bytes = Buffer.from([0x7b, 0xff, 0xfe, 0x7d]);
    expect((await verify({ secret, signature: signWebhook({ secret, body: bytes }) }, bytes)).code).toBe(0);
    // The same bytes re-encoded as text would not match.
    expect(
      (await verify({ secret, signature: signWebhook({ secret, body: bytes.toString('utf8') }) }, bytes)).code,
    ).toBe(1);
  });

  it('says why a signature does not verify (exit 1): another body, another secret, a stale or malformed header', async () => {
    const tampered = await verify({ secret, signature: signWebhook({ secret, body }) }, body.replace('zoë', 'eve'));
    expect(tampered.code).toBe(1);
    expect(tampered.stdout).toBe('');
    expect(tampered.stderr).toBe(
      'error: svc webhooks verify: No signature in the header matches the body with this secret; check the secret and that the body is the raw bytes received.\n',
    );

    const otherSecret = await verify({ secret: 'whsec_other', signature: signWebhook({ secret, body }) }, body);
    expect(otherSecret.stderr).toContain('No signature in the header matches');

    const old = Math.floor(Date.now() / 1000) - 600;
    const stale = await verify({ secret, signature: signWebhook({ secret, body, timestamp: old }) }, body);
    expect(stale.code).toBe(1);
    expect(stale.stderr).toMatch(/The signature's timestamp is 60\d s from now, more than the 300 s tolerance/);
    expect(
      (await verify({ secret, signature: signWebhook({ secret, body, timestamp: old }), tolerance: 900 }, body)).code,
    ).toBe(0);

    const malformed = await verify({ secret, signature: 'v1=abc' }, body);
    expect(malformed.code).toBe(1);
    expect(malformed.stderr).toContain('The Service-Signature header is missing or malformed');
  });

  it('prints the outcome as JSON with --json', async () => {
    const good = await verify(
      { secret, signature: signWebhook({ secret, body, timestamp: 1_785_585_600 }), tolerance: 1e9 },
      body,
      { json: true },
    );
    expect(good.code).toBe(0);
    expect(JSON.parse(good.stdout)).toEqual({ valid: true, timestamp: 1_785_585_600 });
    const bad = await verify({ secret: 'whsec_other', signature: signWebhook({ secret, body }) }, body, { json: true });
    expect(bad.code).toBe(1);
    expect(JSON.parse(bad.stdout)).toMatchObject({ valid: false, reason: 'no_matching_signature' });
    expect(bad.stderr).toContain('No signature in the header matches');
  });

  it('wants the body on stdin, not a terminal (exit 2)', async () => {
    const r = await verify({ secret, signature: signWebhook({ secret, body }) }, '', { tty: true });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/give the raw body on stdin/);
  });
});
