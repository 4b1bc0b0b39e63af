import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  newWebhookSecret,
  signWebhook,
  verifyWebhook,
  WebhookVerificationError,
  type VerifyOptions,
} from './signature.js';

const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const body =
  '{"id":"evt_1","type":"email.sent","created_at":"2026-08-01T12:00:00.000Z","api_version":"2026-08-01","data":{}}';
const t = 1_785_000_000;

function reason(opts: VerifyOptions): string {
  try {
    verifyWebhook(opts);
    return 'valid';
  } catch (err) {
    expect(err).toBeInstanceOf(WebhookVerificationError);
    return (err as WebhookVerificationError).reason;
  }
}

describe('webhook signatures', () => {
  it('v1 is the hex HMAC-SHA256 keyed with the whole secret string over "{t}.{body}"', () => {
    const expected = createHmac('sha256', secret).update(`${t}.${body}`).digest('hex');
    expect(signWebhook({ secret, body, timestamp: t })).toBe(`t=${t},v1=${expected}`);
  });

  it('a fresh secret is whsec_ and 32 random bytes in base64', () => {
    const s = newWebhookSecret();
    expect(s).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(s.slice(6), 'base64')).toHaveLength(32);
    expect(newWebhookSecret()).not.toBe(s);
  });

  it('verifies a body given as a string or as its bytes, within the tolerance', () => {
    const header = signWebhook({ secret, body, timestamp: t });
    expect(verifyWebhook({ secret, header, body, now: t + 299 })).toBe(t);
    expect(reason({ secret, header, body: Buffer.from(body), now: new Date((t - 300) * 1000) })).toBe('valid');
  });

  it('signs with every secret of a rotation, and a receiver holding either one accepts it', () => {
    const next = newWebhookSecret();
    const header = signWebhook({ secret: [next, secret], body, timestamp: t });
    expect(header.split(',')).toHaveLength(3);
    expect(reason({ secret, header, body, now: t })).toBe('valid');
    expect(reason({ secret: next, header, body, now: t })).toBe('valid');
    expect(reason({ secret: [newWebhookSecret(), next], header, body, now: t })).toBe('valid');
  });

  it('names the reason a delivery is refused', () => {
    const header = signWebhook({ secret, body, timestamp: t });
    expect(reason({ secret, header, body: body.replace('sent', 'bounced'), now: t })).toBe('no_matching_signature');
    expect(reason({ secret: newWebhookSecret(), header, body, now: t })).toBe('no_matching_signature');
    expect(reason({ secret, header, body, now: t + 301 })).toBe('timestamp_outside_tolerance');
    expect(reason({ secret, header, body, now: t - 301 })).toBe('timestamp_outside_tolerance');
    expect(reason({ secret, header, body, now: t + 1000, tolerance: 1000 })).toBe('valid');
    for (const bad of [
      undefined,
      '',
      'v1=abc',
      `t=${t}`,
      `t=soon,${header.split(',')[1]}`,
      `t=${t},v1=zz`,
      'garbage',
      `${header},t=${t}`,
    ]) {
      expect(reason({ secret, header: bad, body, now: t }), String(bad)).toBe('malformed_header');
    }
  });

  it('ignores signature schemes it does not know, and whitespace around the parts', () => {
    const [tp, v1] = signWebhook({ secret, body, timestamp: t }).split(',');
    expect(reason({ secret, header: `${tp}, v0=deadbeef, ${v1}`, body, now: t })).toBe('valid');
  });
});
