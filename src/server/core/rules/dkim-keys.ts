import {
  createCipheriv,
  createDecipheriv,
  createPrivateKey,
  createPublicKey,
  generateKeyPair,
  hkdfSync,
  randomBytes,
} from 'node:crypto';
import { promisify } from 'node:util';
import type { DomainRow } from '../../store/domains.js';
import type { Secrets } from '../deps.js';
import { IN_MEMORY_SEED_DKIM_KEY } from './seed-dkim-key.js';

export const DKIM_SELECTOR = 'svc1';

const generateKeyPairAsync = promisify(generateKeyPair);

export type DkimKeyPair = { publicKey: Buffer; privateKey: string };
/** A new domain's DKIM key: a real 2048-bit RSA key. */
export const makeDkimKey = () =>
  generateKeyPairAsync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'der' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  }) as unknown as Promise<DkimKeyPair>;

/** The seeded domain of an in-memory server signs with a key published with the package (seed-dkim-key.ts). */
export function inMemorySeedKey(): DkimKeyPair {
  const publicKey = createPublicKey(IN_MEMORY_SEED_DKIM_KEY).export({ type: 'spki', format: 'der' });
  return { publicKey, privateKey: IN_MEMORY_SEED_DKIM_KEY };
}

/** A DKIM key given as a PEM (a seed file's `dkim_private_key`): its public half, and the private one as PKCS #8. */
export function dkimKeyFromPem(pem: string): DkimKeyPair {
  const key = createPrivateKey(pem);
  return {
    publicKey: createPublicKey(key).export({ type: 'spki', format: 'der' }),
    privateKey: key.export({ type: 'pkcs8', format: 'pem' }).toString(),
  };
}

/** Private DKIM keys are kept encrypted (AES-256-GCM under a key derived from the server secret). */
function dkimCipherKey(secrets: Secrets): Buffer {
  return Buffer.from(hkdfSync('sha256', secrets.hashKey, Buffer.alloc(0), 'svc dkim private keys', 32));
}
export function encryptPrivateKey(secrets: Secrets, pem: string): string {
  const iv = randomBytes(12);
  const c = createCipheriv('aes-256-gcm', dkimCipherKey(secrets), iv);
  const ct = Buffer.concat([c.update(pem, 'utf8'), c.final()]);
  return ['v1', iv.toString('base64'), c.getAuthTag().toString('base64'), ct.toString('base64')].join(':');
}
function decryptPrivateKey(secrets: Secrets, stored: string): string {
  const [, iv, tag, ct] = stored.split(':');
  const d = createDecipheriv('aes-256-gcm', dkimCipherKey(secrets), Buffer.from(iv!, 'base64'));
  d.setAuthTag(Buffer.from(tag!, 'base64'));
  return Buffer.concat([d.update(Buffer.from(ct!, 'base64')), d.final()]).toString('utf8');
}

/** The private key and selector to DKIM-sign mail from a domain. */
export function signingKeyOf(secrets: Secrets, d: DomainRow) {
  return {
    domainName: d.name,
    keySelector: d.dkim_selector,
    privateKey: decryptPrivateKey(secrets, d.dkim_private_key),
  };
}
