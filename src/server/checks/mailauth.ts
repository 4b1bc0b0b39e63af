// mailauth, loaded here alone, through its documented entry point: the DNS lookup every caller hands it (one type, the
// shape of core's Resolver.resolve), a caught message's DKIM verdict (the inbox's `dkim`, core's verifyDkim dep, wired
// by backend.ts) and its whole `authenticate` (SPF, DKIM and DMARC together: the authentication check).
import { Readable } from 'node:stream';
import type { AuthenticateOptions, AuthenticateResult, DNSResolver } from 'mailauth';
import type { DkimVerdict } from '../core/inbox-read.js';
import { headerBlock } from '../core/rules/caught-body.js';

/** A DNS lookup as mailauth calls it (`dns.promises.resolve` shape): the sandbox zone or real DNS. */
export type MailauthResolver = (name: string, rrtype: string) => Promise<unknown>;

/**
 * mailauth, loaded by the first verdict or check (or the checks' warm-up), not at start: most mail is never opened.
 * Kept once loaded: an import() of a module already loaded still goes through the module loader, some 5–10 µs a call
 * warm, on the way of every first read.
 */
let mailauth: Promise<typeof import('mailauth')> | undefined;
export const loadMailauth = () => (mailauth ??= import('mailauth'));

/** The lookup as mailauth's types have it: it answers what node's resolver would, typed loosely on our side. */
const asMailauth = (resolver: MailauthResolver) => resolver as DNSResolver;

/** Whether the header block (within its first 256 KiB) has a DKIM-Signature field. */
function isSigned(raw: Buffer): boolean {
  return /^dkim-signature:/im.test(headerBlock(raw.subarray(0, 256 * 1024)).toString('latin1'));
}

/** Verifies a message's DKIM signatures with mailauth against `resolver`. */
export async function verifyDkim(raw: Buffer, resolver: MailauthResolver): Promise<DkimVerdict> {
  if (!isSigned(raw)) return 'none';
  try {
    const { dkimVerify } = await loadMailauth();
    // As a stream (one of mailauth's documented inputs): it is read through at once, where a Buffer is written a
    // turn of the event loop at a time, and a held wait's answer would wait on whatever else those turns run.
    const result = await dkimVerify(Readable.from([raw], { objectMode: false }), { resolver: asMailauth(resolver) });
    const statuses = (result.results ?? []).map((r: { status?: { result?: string } }) => r.status?.result);
    if (statuses.includes('pass')) return 'pass';
    return statuses.length ? 'fail' : 'none';
  } catch {
    return 'fail';
  }
}

/** SPF, DKIM and DMARC as a receiving server judges them, looked up with `resolver`. */
export async function authenticate(
  raw: Buffer,
  opts: Omit<AuthenticateOptions, 'resolver'>,
  resolver: MailauthResolver,
): Promise<AuthenticateResult> {
  const mailauth = await loadMailauth();
  return mailauth.authenticate(raw, { ...opts, resolver: asMailauth(resolver) });
}
