// The certificate of SMTP TLS: both submission listeners present it, and the sink's STARTTLS (`--smtp-starttls`).
// One brought with `--smtp-tls-cert/--smtp-tls-key` is used as given; otherwise one for `localhost` (and
// `host.docker.internal`), 127.0.0.1 and ::1 is made on the first start and kept in the data directory (0600), so a
// client that trusts it once (nodemailer's `tls.ca`, Python's `cafile`, swaks's `--tls-ca-path`) keeps trusting it
// across restarts. With `--memory` it is made in memory, once per process: every in-memory server of a test run
// presents the same one. A kept one is used whatever its key (an RSA one made by an earlier version too) until it nears
// its end.
//
// Making one costs about a millisecond once its library is loaded: node:crypto makes an ECDSA P-256 key and the
// signature, and forge's ASN.1 module (X.509 needs an ASN.1 writer; node:crypto reads certificates but writes none)
// lays the certificate out through its public functions. That module is loaded alone, from its file, when a
// certificate is made: the rest of forge (ciphers, RSA, PKI in JavaScript) would take several times as long to load.
// The file's path is no documented entry point, hence forge's exact pin, and tls.test.ts checks it is forge's `asn1`.
import { X509Certificate, createHash, generateKeyPairSync, randomBytes, sign } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { createSecureContext } from 'node:tls';
import { join, resolve } from 'node:path';
import type { Logger } from '../../lib/log.js';
import { writePrivateFile } from '../../lib/private-file.js';

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

/** The OIDs of the certificate (RFC 5280, RFC 5480, RFC 5758). */
const OID = {
  ecPublicKey: '1.2.840.10045.2.1',
  prime256v1: '1.2.840.10045.3.1.7',
  ecdsaWithSha256: '1.2.840.10045.4.3.2',
  commonName: '2.5.4.3',
  organizationName: '2.5.4.10',
  subjectKeyIdentifier: '2.5.29.14',
  keyUsage: '2.5.29.15',
  subjectAltName: '2.5.29.17',
  basicConstraints: '2.5.29.19',
  authorityKeyIdentifier: '2.5.29.35',
  extKeyUsage: '2.5.29.37',
  serverAuth: '1.3.6.1.5.5.7.3.1',
};

/**
 * A self-signed certificate for this machine's names: `localhost`, `host.docker.internal`, 127.0.0.1 and ::1; an ECDSA
 * P-256 key, signed with ecdsa-with-SHA256. node:crypto makes the key (a fraction of a millisecond, where RSA 2048 took
 * 100–400) and the signature; forge's ASN.1 module lays the certificate out.
 */
export async function makeCertificate(now: number): Promise<{ cert: Buffer; key: Buffer }> {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const { default: asn1 } = await import('node-forge/lib/asn1.js');
  const { Class, Type } = asn1;
  type Node = ReturnType<typeof asn1.create>;
  const bytes = (b: Buffer) => b.toString('binary');
  const seq = (...items: Node[]) => asn1.create(Class.UNIVERSAL, Type.SEQUENCE, true, items);
  const oid = (dotted: string) => asn1.create(Class.UNIVERSAL, Type.OID, false, asn1.oidToDer(dotted).getBytes());
  const octets = (b: Buffer) => asn1.create(Class.UNIVERSAL, Type.OCTETSTRING, false, bytes(b));
  /** A BIT STRING of whole bytes: no unused bits. */
  const bits = (b: Buffer) => asn1.create(Class.UNIVERSAL, Type.BITSTRING, false, `\0${bytes(b)}`);
  const der = (node: Node) => Buffer.from(asn1.toDer(node).getBytes(), 'binary');
  // RFC 5280 section 4.1.2.5: UTCTime through 2049, GeneralizedTime from 2050.
  const time = (d: Date) =>
    d.getUTCFullYear() < 2050
      ? asn1.create(Class.UNIVERSAL, Type.UTCTIME, false, asn1.dateToUtcTime(d))
      : asn1.create(Class.UNIVERSAL, Type.GENERALIZEDTIME, false, asn1.dateToGeneralizedTime(d));
  /** An extension: its OID, critical when it is, and its value's DER in an OCTET STRING. */
  const extension = (id: string, critical: boolean, value: Node) =>
    seq(oid(id), ...(critical ? [asn1.create(Class.UNIVERSAL, Type.BOOLEAN, false, '\xff')] : []), octets(der(value)));
  const context = (tag: number, value: string) => asn1.create(Class.CONTEXT_SPECIFIC, tag, false, value);

  // The public key's point, uncompressed (04 ‖ x ‖ y), as the key info carries it and its identifier is made of.
  const jwk = publicKey.export({ format: 'jwk' });
  const point = Buffer.concat([Buffer.from([4]), Buffer.from(jwk.x!, 'base64url'), Buffer.from(jwk.y!, 'base64url')]);
  // The key identifier both extensions carry: SHA-1 of the public key's bits (RFC 5280 section 4.2.1.2, method 1).
  const keyId = createHash('sha1').update(point).digest();
  // RFC 5758 section 3.2: the algorithm identifier of ECDSA has no parameters (not a NULL).
  const algorithm = seq(oid(OID.ecdsaWithSha256));
  const name = seq(
    asn1.create(Class.UNIVERSAL, Type.SET, true, [
      seq(oid(OID.commonName), asn1.create(Class.UNIVERSAL, Type.UTF8, false, 'localhost')),
    ]),
    asn1.create(Class.UNIVERSAL, Type.SET, true, [
      seq(oid(OID.organizationName), asn1.create(Class.UNIVERSAL, Type.UTF8, false, 'svc serve (local SMTP)')),
    ]),
  );
  const tbs = seq(
    // v3: it has extensions.
    asn1.create(Class.CONTEXT_SPECIFIC, 0, true, [
      asn1.create(Class.UNIVERSAL, Type.INTEGER, false, asn1.integerToDer(2).getBytes()),
    ]),
    // A positive serial number of 16 random bytes (RFC 5280 section 4.1.2.2: at most 20 octets, positive).
    asn1.create(Class.UNIVERSAL, Type.INTEGER, false, bytes(Buffer.concat([Buffer.from([0x7f]), randomBytes(15)]))),
    algorithm,
    name,
    // Valid from a day back: a client whose clock runs behind this one's still accepts it.
    seq(time(new Date(now - 86_400_000)), time(new Date(now + VALIDITY_DAYS * 86_400_000))),
    name,
    seq(seq(oid(OID.ecPublicKey), oid(OID.prime256v1)), bits(point)),
    asn1.create(Class.CONTEXT_SPECIFIC, 3, true, [
      seq(
        // Its own issuer: clients that are told to trust it (as a CA file) need it to be a CA as well.
        extension(OID.basicConstraints, true, seq(asn1.create(Class.UNIVERSAL, Type.BOOLEAN, false, '\xff'))),
        // digitalSignature (bit 0) and keyCertSign (bit 5): 10000100, its last two bits unused. An EC key signs; it
        // does not encipher keys (RFC 5480 section 3: keyEncipherment must not be set).
        extension(OID.keyUsage, true, asn1.create(Class.UNIVERSAL, Type.BITSTRING, false, '\x02\x84')),
        extension(OID.extKeyUsage, false, seq(oid(OID.serverAuth))),
        extension(
          OID.subjectAltName,
          false,
          seq(
            context(2, 'localhost'),
            // The name a container reaches its host by (Docker Desktop; `host-gateway` on Linux).
            context(2, 'host.docker.internal'),
            context(7, '\x7f\0\0\x01'),
            context(7, `${'\0'.repeat(15)}\x01`),
          ),
        ),
        // Both key identifiers: OpenSSL's strict checks (Python ≥ 3.13 verifies with them) want them on a CA.
        extension(OID.subjectKeyIdentifier, false, octets(keyId)),
        extension(OID.authorityKeyIdentifier, false, seq(context(0, bytes(keyId)))),
      ),
    ]),
  );
  const tbsDer = der(tbs);
  // ECDSA-Sig-Value in DER, as X.509 carries it (node's default signature encoding).
  const signature = sign('sha256', tbsDer, privateKey);
  const cert = new X509Certificate(der(seq(tbs, algorithm, bits(signature))));
  return { cert: Buffer.from(cert.toString()), key: Buffer.from(privateKey.export({ type: 'pkcs8', format: 'pem' })) };
}
