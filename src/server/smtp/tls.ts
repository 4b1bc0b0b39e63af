// The certificate of SMTP TLS: the sink's STARTTLS and both submission listeners present it. One brought with
// `--smtp-tls-cert/--smtp-tls-key` is used as given; otherwise one for `localhost` (and `host.docker.internal`),
// 127.0.0.1 and ::1 is made on the first start and kept in the data directory (0600), so a client that trusts it once
// (nodemailer's `tls.ca`, Python's `cafile`, swaks's `--tls-ca-path`) keeps trusting it across restarts. With `--memory` it is made in memory, once per
// process: every in-memory server of a test run presents the same one.
//
// node-forge lays out the certificate (X.509 needs an ASN.1 library; node:crypto reads certificates but writes none);
// node:crypto makes the key and the signature, which forge's own RSA, in JavaScript, takes 40–60 ms to do. forge is
// loaded only when a certificate is made.
import { X509Certificate, generateKeyPair, randomBytes, sign } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { createSecureContext } from 'node:tls';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import type { Logger } from '../../lib/log.js';
import { writePrivateFile } from '../secrets.js';

/** The files a data directory keeps the made certificate and its key in. */
export const TLS_CERT_FILE = 'smtp-tls.crt';
export const TLS_KEY_FILE = 'smtp-tls.key';

/** How long a made certificate is valid: 825 days, the longest any platform still trusts a server certificate for. */
const VALIDITY_DAYS = 825;
/** A kept certificate this close to its end (or past it) is replaced on start. */
const RENEW_BEFORE_MS = 30 * 86_400_000;

export interface SmtpTls {
  cert: Buffer;
  key: Buffer;
  /** Where the certificate is (the kept file, or the one given); null when it was made in memory. */
  path: string | null;
  /** Its SHA-256 fingerprint, as `openssl x509 -fingerprint -sha256` prints it: `AB:CD:…`. */
  fingerprint: string;
}

/** A certificate and key that cannot be used, with what is wrong in words for the command line. */
export class TlsFilesError extends Error {}

let inMemory: Promise<{ cert: Buffer; key: Buffer }> | undefined;

/**
 * The certificate for SMTP TLS: the files given, else the one kept in `dataDir` (made there when missing, unreadable or
 * near its end), else one made in memory for this process.
 */
export async function smtpTls(o: {
  dataDir: string | null;
  certFile?: string;
  keyFile?: string;
  log: Logger;
  now?: number;
}): Promise<SmtpTls> {
  if (o.certFile || o.keyFile) return given(o.certFile, o.keyFile);
  const now = o.now ?? Date.now();
  if (!o.dataDir) {
    inMemory ??= makeCertificate(now);
    return withFingerprint(await inMemory, null);
  }
  const certPath = join(o.dataDir, TLS_CERT_FILE);
  const keyPath = join(o.dataDir, TLS_KEY_FILE);
  const kept = keptPair(certPath, keyPath, now);
  if (kept) return withFingerprint(kept, certPath);
  if (existsSync(certPath)) o.log.info('making a new SMTP TLS certificate: the kept one is unusable or near its end');
  const made = await makeCertificate(now);
  // The key first: a certificate is never kept without its key.
  writePrivateFile(keyPath, made.key.toString());
  writePrivateFile(certPath, made.cert.toString());
  return withFingerprint(made, certPath);
}

function withFingerprint(pair: { cert: Buffer; key: Buffer }, path: string | null): SmtpTls {
  return { ...pair, path, fingerprint: new X509Certificate(pair.cert).fingerprint256 };
}

/** The kept pair when both files read, belong together and the certificate is valid for a while yet. */
function keptPair(certPath: string, keyPath: string, now: number): { cert: Buffer; key: Buffer } | null {
  try {
    const cert = readFileSync(certPath);
    const key = readFileSync(keyPath);
    createSecureContext({ cert, key });
    if (Date.parse(new X509Certificate(cert).validTo) - RENEW_BEFORE_MS < now) return null;
    return { cert, key };
  } catch {
    return null;
  }
}

/** A certificate and key brought by the user, checked now so that a mistake stops the start, not the first client. */
function given(certFile: string | undefined, keyFile: string | undefined): SmtpTls {
  if (!certFile || !keyFile) throw new TlsFilesError('--smtp-tls-cert and --smtp-tls-key go together; give both.');
  const read = (file: string, flag: string) => {
    try {
      return readFileSync(file);
    } catch (err) {
      throw new TlsFilesError(`${flag} ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
  };
  const cert = read(certFile, '--smtp-tls-cert');
  const key = read(keyFile, '--smtp-tls-key');
  let fingerprint: string;
  try {
    fingerprint = new X509Certificate(cert).fingerprint256;
  } catch {
    throw new TlsFilesError(`--smtp-tls-cert ${certFile} is not a PEM certificate.`);
  }
  try {
    createSecureContext({ cert, key });
  } catch (err) {
    throw new TlsFilesError(
      `--smtp-tls-key ${keyFile} does not go with --smtp-tls-cert ${certFile} (${(err as Error).message}).`,
    );
  }
  return { cert, key, path: resolve(certFile), fingerprint };
}

/**
 * A self-signed certificate for this machine's names: `localhost`, `host.docker.internal`, 127.0.0.1 and ::1; RSA 2048
 * with SHA-256.
 */
export async function makeCertificate(now: number): Promise<{ cert: Buffer; key: Buffer }> {
  const [{ default: forge }, keys] = await Promise.all([
    import('node-forge'),
    promisify(generateKeyPair)('rsa', {
      modulusLength: 2048,
      publicKeyEncoding: { type: 'spki', format: 'pem' },
      privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
    }),
  ]);
  const { pki, asn1 } = forge;
  const cert = pki.createCertificate();
  cert.publicKey = pki.publicKeyFromPem(keys.publicKey);
  // A positive serial number of 16 random bytes (RFC 5280 section 4.1.2.2: at most 20 octets, positive).
  cert.serialNumber = `7f${randomBytes(15).toString('hex')}`;
  // Valid from a day back: a client whose clock runs behind this one's still accepts it.
  cert.validity.notBefore = new Date(now - 86_400_000);
  cert.validity.notAfter = new Date(now + VALIDITY_DAYS * 86_400_000);
  const name = [
    { name: 'commonName', value: 'localhost' },
    { name: 'organizationName', value: 'svc serve (local SMTP)' },
  ];
  cert.setSubject(name);
  cert.setIssuer(name);
  cert.setExtensions([
    // Its own issuer: clients that are told to trust it (as a CA file) need it to be a CA as well.
    { name: 'basicConstraints', cA: true, critical: true },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, keyCertSign: true, critical: true },
    { name: 'extKeyUsage', serverAuth: true },
    {
      name: 'subjectAltName',
      altNames: [
        { type: 2, value: 'localhost' },
        // The name a container reaches its host by (Docker Desktop; `host-gateway` on Linux).
        { type: 2, value: 'host.docker.internal' },
        { type: 7, ip: '127.0.0.1' },
        { type: 7, ip: '::1' },
      ],
    },
    { name: 'subjectKeyIdentifier' },
    // Both key identifiers: OpenSSL's strict checks (Python ≥ 3.13 verifies with them) want them on a CA certificate.
    { name: 'authorityKeyIdentifier', keyIdentifier: true },
  ]);
  // What cert.sign(key, md) does, with node's RSA: the algorithm named, the to-be-signed part laid out (by forge's
  // getTBSCertificate, which its type definitions leave out: hence the exact pin, and tls.test.ts) and signed.
  cert.signatureOid = cert.siginfo.algorithmOid = pki.oids.sha256WithRSAEncryption!;
  const { getTBSCertificate } = pki as unknown as { getTBSCertificate(c: typeof cert): ReturnType<typeof asn1.create> };
  const tbs = Buffer.from(asn1.toDer(getTBSCertificate(cert)).getBytes(), 'binary');
  cert.signature = sign('sha256', tbs, keys.privateKey).toString('binary');
  return { cert: Buffer.from(pki.certificateToPem(cert)), key: Buffer.from(keys.privateKey) };
}
