// Webhook signatures (docs/api.md#signature): the delivery worker signs with this module, `svc webhooks
// listen` re-signs with it, `svc webhooks verify` checks with it, and it is exported for receivers.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export const SIGNATURE_HEADER = 'Service-Signature';
export const EVENT_ID_HEADER = 'Service-Event-Id';
export const ATTEMPT_HEADER = 'Service-Delivery-Attempt';
/** Seconds a receiver accepts between the signature's `t` and its own clock (docs/api.md#signature). */
export const DEFAULT_TOLERANCE_SECONDS = 300;
export const SECRET_PREFIX = 'whsec_';

/** A new endpoint secret: `whsec_` + base64 of 32 random bytes. */
export function newWebhookSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString('base64');
}

/** `v1`: lowercase hex HMAC-SHA256 keyed with the UTF-8 bytes of the whole secret string, over `{t}.{raw body}`. */
export function computeSignature(secret: string, timestamp: number, body: string | Uint8Array): string {
  return createHmac('sha256', Buffer.from(secret, 'utf8'))
    .update(`${timestamp}.`, 'utf8')
    .update(typeof body === 'string' ? Buffer.from(body, 'utf8') : body)
    .digest('hex');
}

export interface SignOptions {
  /** One secret, or several (during a rotation: the new one first); one `v1` value each. */
  secret: string | readonly string[];
  /** The raw body exactly as sent. */
  body: string | Uint8Array;
  /** Unix seconds; the current wall-clock time by default. */
  timestamp?: number;
}

/** The `Service-Signature` header value for a body: `t=<unix seconds>,v1=<hex>[,v1=<hex>…]`. */
export function signWebhook(opts: SignOptions): string {
  const t = opts.timestamp ?? Math.floor(Date.now() / 1000);
  const secrets = typeof opts.secret === 'string' ? [opts.secret] : opts.secret;
  return [`t=${t}`, ...secrets.map((s) => `v1=${computeSignature(s, t, opts.body)}`)].join(',');
}

export type WebhookVerificationReason = 'malformed_header' | 'no_matching_signature' | 'timestamp_outside_tolerance';

/** Why a delivery did not verify; `reason` is stable, the message is for people. */
export class WebhookVerificationError extends Error {
  constructor(
    readonly reason: WebhookVerificationReason,
    message: string,
  ) {
    super(message);
    this.name = 'WebhookVerificationError';
  }
}

export interface VerifyOptions {
  /** The endpoint's secret (`whsec_…`); several are accepted, as a receiver holds both during a rotation. */
  secret: string | readonly string[];
  /** The `Service-Signature` header as received. */
  header: string | null | undefined;
  /** The raw body as received, before any JSON parsing. */
  body: string | Uint8Array;
  /** Largest accepted difference between `t` and now, seconds (default 300). */
  tolerance?: number;
  /** The receiver's clock: unix seconds or a Date (default: now). */
  now?: number | Date;
}

/** Parses `t=…,v1=…[,v1=…]`; other schemes are ignored, as a newer sender may add them. */
export function parseSignatureHeader(header: string): { timestamp: number; signatures: string[] } | null {
  let timestamp: number | undefined;
  const signatures: string[] = [];
  for (const part of header.split(',')) {
    const eq = part.indexOf('=');
    if (eq < 0) return null;
    const key = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (key === 't') {
      if (!/^\d{1,12}$/.test(value) || timestamp !== undefined) return null;
      timestamp = Number(value);
    } else if (key === 'v1') {
      if (!/^[0-9a-f]{64}$/i.test(value)) return null;
      signatures.push(value.toLowerCase());
    }
  }
  return timestamp === undefined || signatures.length === 0 ? null : { timestamp, signatures };
}

/**
 * Checks a delivery the way a receiver must (docs/api.md#signature): the header parses, one of its `v1` values matches one of the
 * secrets (compared in constant time), and `t` is within `tolerance` seconds of now. Throws a
 * WebhookVerificationError naming the reason; returns the signature's timestamp (unix seconds).
 */
export function verifyWebhook(opts: VerifyOptions): number {
  const parsed = opts.header ? parseSignatureHeader(opts.header) : null;
  if (!parsed) {
    throw new WebhookVerificationError(
      'malformed_header',
      'The Service-Signature header is missing or malformed; expected "t=<unix seconds>,v1=<hex signature>".',
    );
  }
  const secrets = typeof opts.secret === 'string' ? [opts.secret] : opts.secret;
  const matched = secrets.some((secret) => {
    const expected = Buffer.from(computeSignature(secret, parsed.timestamp, opts.body), 'hex');
    // Every candidate is compared (no early exit on the first byte that differs).
    return parsed.signatures.reduce((hit, sig) => timingSafeEqual(expected, Buffer.from(sig, 'hex')) || hit, false);
  });
  if (!matched) {
    throw new WebhookVerificationError(
      'no_matching_signature',
      'No signature in the header matches the body with this secret; check the secret and that the body is the raw bytes received.',
    );
  }
  const now =
    opts.now === undefined ? Date.now() / 1000 : opts.now instanceof Date ? opts.now.getTime() / 1000 : opts.now;
  const tolerance = opts.tolerance ?? DEFAULT_TOLERANCE_SECONDS;
  if (Math.abs(now - parsed.timestamp) > tolerance) {
    throw new WebhookVerificationError(
      'timestamp_outside_tolerance',
      `The signature's timestamp is ${Math.round(Math.abs(now - parsed.timestamp))} s from now, more than the ${tolerance} s tolerance (a replay, or a clock out of sync).`,
    );
  }
  return parsed.timestamp;
}
