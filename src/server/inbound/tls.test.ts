// The certificate of SMTP TLS: an ECDSA P-256 key from node:crypto, laid out by forge's ASN.1 module (loaded from its
// file: pinned exactly), it is what OpenSSL reads and what TLS clients accept for localhost and 127.0.0.1 — node's,
// Python's with strict verification and OpenSSL's s_client; kept 0600 and reused (an RSA one made by an earlier version
// too), made again near its end; one brought with the flags is checked before the start.
import { execFile } from 'node:child_process';
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer, connect } from 'node:tls';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../lib/log.js';
import { TLS_CERT_FILE, TLS_KEY_FILE, TlsFilesError, makeCertificate, smtpTls } from './tls.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'svc-tls-'));
  dirs.push(d);
  return d;
};

const run = promisify(execFile);

/** A TLS server on 127.0.0.1 presenting `cert`, for as long as `use` runs. */
async function serving<T>(cert: Buffer, key: Buffer, use: (port: number) => Promise<T>): Promise<T> {
  const server = createServer({ cert, key }, (s) => s.end());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    return await use((server.address() as AddressInfo).port);
  } finally {
    server.close();
  }
}

/** Whether a TLS client trusting `ca` accepts a server presenting `cert` when it connects to `host`. */
function handshake(cert: Buffer, key: Buffer, ca: Buffer, host: string): Promise<string | null> {
  return serving(cert, key, (port) => nodeHandshake(port, ca, host));
}

function nodeHandshake(port: number, ca: Buffer, host: string): Promise<string | null> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port, ca, servername: host === '127.0.0.1' ? undefined : host });
    socket.once('secureConnect', () => {
      resolve(socket.authorized ? null : String(socket.authorizationError));
      socket.destroy();
    });
    socket.once('error', (err) => resolve(err.message));
  });
}

describe('node-forge as tls.ts knows it', () => {
  it('is the version package.json and the lock pin exactly', () => {
    const installed = createRequire(import.meta.url)('node-forge/package.json').version as string;
    const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8'));
    expect(pkg.dependencies['node-forge']).toBe(installed);
    const lock = JSON.parse(readFileSync(new URL('../../../package-lock.json', import.meta.url), 'utf8'));
    expect(lock.packages[''].dependencies['node-forge']).toBe(installed);
  });

  it("loads its ASN.1 module from lib/asn1.js: that file is forge's own asn1, with the functions tls.ts calls", () => {
    const require = createRequire(import.meta.url);
    const alone = require('node-forge/lib/asn1.js');
    expect(alone).toBe(require('node-forge').asn1);
    for (const fn of ['create', 'toDer', 'oidToDer', 'integerToDer', 'dateToUtcTime', 'dateToGeneralizedTime'])
      expect(typeof alone[fn], fn).toBe('function');
  });
});

describe('the certificate made for SMTP TLS', () => {
  it('names localhost, host.docker.internal, 127.0.0.1 and ::1, is signed by its own key, and TLS clients trusting it accept it', async () => {
    const now = Date.now();
    const { cert, key } = await makeCertificate(now);
    const x = new X509Certificate(cert);
    expect(x.subjectAltName).toBe(
      'DNS:localhost, DNS:host.docker.internal, IP Address:127.0.0.1, IP Address:0:0:0:0:0:0:0:1',
    );
    expect(x.verify(x.publicKey)).toBe(true);
    expect(x.checkHost('localhost')).toBe('localhost');
    expect(x.checkIP('127.0.0.1')).toBe('127.0.0.1');
    expect(Date.parse(x.validFrom)).toBeLessThan(now);
    expect(Date.parse(x.validTo)).toBeGreaterThan(now + 800 * 86_400_000);
    expect(await handshake(cert, key, cert, 'localhost')).toBeNull();
    expect(await handshake(cert, key, cert, '127.0.0.1')).toBeNull();
    // Not another name, and not for a client that does not trust it.
    expect(await handshake(cert, key, cert, 'example.org')).toMatch(/altnames|Hostname/i);
    expect(await handshake(cert, key, (await makeCertificate(now)).cert, 'localhost')).toMatch(/self.signed|unable/i);
  });

  it('is an ECDSA P-256 certificate signed with ecdsa-with-SHA256, whose algorithm has no parameters', async () => {
    const { cert, key } = await makeCertificate(Date.now());
    const x = new X509Certificate(cert);
    expect(x.publicKey.asymmetricKeyType).toBe('ec');
    expect(x.publicKey.asymmetricKeyDetails?.namedCurve).toBe('prime256v1');
    expect(x.checkPrivateKey(createPrivateKey(key))).toBe(true);
    expect(x.ca).toBe(true);
    // RFC 5758 section 3.2: SEQUENCE { OID 1.2.840.10045.4.3.2 } and nothing more, in the certificate and its body.
    const der = x.raw.toString('hex');
    expect(der.split('300a06082a8648ce3d040302').length - 1).toBe(2);
    expect(der).not.toContain('06082a8648ce3d0403020500');
  });

  it('reads in OpenSSL as it should: a CA for itself, its key usages, both key identifiers of its key', async () => {
    const dir = tempDir();
    const { cert, key } = await makeCertificate(Date.now());
    writeFileSync(join(dir, 'c.pem'), cert);
    writeFileSync(join(dir, 'k.pem'), key);
    const { stdout: text } = await run('openssl', ['x509', '-in', join(dir, 'c.pem'), '-text', '-noout']);
    expect(text).toMatch(/Version: 3 \(0x2\)/);
    expect(text).toMatch(/Serial Number:\s*\n\s*7f(:[0-9a-f]{2}){15}\n/);
    expect(text).toMatch(/Signature Algorithm: ecdsa-with-SHA256/);
    expect(text).toMatch(/Issuer: CN = localhost, O = svc serve \(local SMTP\)/);
    expect(text).toMatch(/Subject: CN = localhost, O = svc serve \(local SMTP\)/);
    expect(text).toMatch(/ASN1 OID: prime256v1/);
    expect(text).toMatch(/Basic Constraints: critical\s*\n\s*CA:TRUE\n/);
    expect(text).toMatch(/Key Usage: critical\s*\n\s*Digital Signature, Certificate Sign\n/);
    expect(text).toMatch(/Extended Key Usage:\s*\n\s*TLS Web Server Authentication\n/);
    expect(text).toMatch(
      /Subject Alternative Name:\s*\n\s*DNS:localhost, DNS:host.docker.internal, IP Address:127.0.0.1, IP Address:0:0:0:0:0:0:0:1\n/,
    );
    // The identifiers OpenSSL itself gives that key, in a certificate it makes for it.
    await run('openssl', [
      'req',
      '-new',
      '-x509',
      '-key',
      join(dir, 'k.pem'),
      '-subj',
      '/CN=ref',
      '-out',
      join(dir, 'ref.pem'),
    ]);
    const { stdout: ref } = await run('openssl', ['x509', '-in', join(dir, 'ref.pem'), '-text', '-noout']);
    const keyId = /Subject Key Identifier:\s*\n\s*([0-9A-F:]{59})\n/.exec(ref)![1];
    expect(text).toContain(`Subject Key Identifier: \n                ${keyId}\n`);
    expect(text).toMatch(new RegExp(`Authority Key Identifier:\\s*\\n\\s*(keyid:)?${keyId}\\n`));
    const { stdout: verified } = await run('openssl', [
      'verify',
      '-x509_strict',
      '-CAfile',
      join(dir, 'c.pem'),
      join(dir, 'c.pem'),
    ]);
    expect(verified).toMatch(/: OK$/m);
  });

  it("is accepted by Python's ssl with strict verification and by OpenSSL's s_client, for its names only", async () => {
    const dir = tempDir();
    const { cert, key } = await makeCertificate(Date.now());
    const ca = join(dir, 'ca.pem');
    writeFileSync(ca, cert);
    const python = (port: number, host: string) =>
      run('python3', [
        '-c',
        `
import socket, ssl, sys
ctx = ssl.create_default_context(cafile=sys.argv[1])
ctx.verify_flags |= ssl.VERIFY_X509_STRICT
try:
    with socket.create_connection(('127.0.0.1', int(sys.argv[2])), timeout=10) as s:
        with ctx.wrap_socket(s, server_hostname=sys.argv[3]) as t:
            print('ok', t.version())
except ssl.SSLError as e:
    print('refused', e.reason, e.verify_message if hasattr(e, 'verify_message') else '')
`,
        ca,
        String(port),
        host,
      ]).then((r) => r.stdout.trim());
    const sClient = (port: number, check: string[]) =>
      run('openssl', [
        's_client',
        '-connect',
        `127.0.0.1:${port}`,
        '-verify_return_error',
        '-CAfile',
        ca,
        ...check,
      ]).then(
        (r) => r.stdout + r.stderr,
        (err: { stdout: string; stderr: string }) => `failed: ${err.stdout}${err.stderr}`,
      );
    await serving(cert, key, async (port) => {
      expect(await python(port, 'localhost')).toMatch(/^ok TLSv1\.[23]$/);
      expect(await python(port, '127.0.0.1')).toMatch(/^ok TLSv1\.[23]$/);
      expect(await python(port, 'example.org')).toMatch(/^refused CERTIFICATE_VERIFY_FAILED .*mismatch/i);
      expect(await sClient(port, ['-verify_hostname', 'localhost'])).toMatch(/Verify return code: 0 \(ok\)/);
      expect(await sClient(port, ['-verify_ip', '127.0.0.1'])).toMatch(/Verify return code: 0 \(ok\)/);
      expect(await sClient(port, ['-verify_hostname', 'example.org'])).toMatch(/^failed: .*hostname mismatch/ms);
    });
  });

  it('is kept in the data directory, readable only by the user, and the next start presents the same one', async () => {
    const dir = tempDir();
    const first = await smtpTls({ dataDir: dir, log: silentLogger });
    expect(first.path).toBe(join(dir, TLS_CERT_FILE));
    expect(statSync(join(dir, TLS_CERT_FILE)).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir, TLS_KEY_FILE)).mode & 0o777).toBe(0o600);
    expect(first.fingerprint).toBe(new X509Certificate(readFileSync(first.path!)).fingerprint256);
    const second = await smtpTls({ dataDir: dir, log: silentLogger });
    expect(second.fingerprint).toBe(first.fingerprint);
  });

  it('is made again when the kept one nears its end, or its files do not go together', async () => {
    const dir = tempDir();
    const first = await smtpTls({ dataDir: dir, log: silentLogger });
    const later = await smtpTls({ dataDir: dir, log: silentLogger, now: Date.now() + 800 * 86_400_000 });
    expect(later.fingerprint).not.toBe(first.fingerprint);
    writeFileSync(join(dir, TLS_KEY_FILE), (await makeCertificate(Date.now())).key);
    const mended = await smtpTls({ dataDir: dir, log: silentLogger });
    expect(mended.fingerprint).not.toBe(later.fingerprint);
  });

  it('is kept whatever its key: an RSA one made by an earlier version is presented until it nears its end', async () => {
    const dir = tempDir();
    await run('openssl', [
      ...['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=localhost', '-days', '825'],
      ...['-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1'],
      ...['-keyout', join(dir, TLS_KEY_FILE), '-out', join(dir, TLS_CERT_FILE)],
    ]);
    const kept = readFileSync(join(dir, TLS_CERT_FILE));
    const tls = await smtpTls({ dataDir: dir, log: silentLogger });
    expect(tls.fingerprint).toBe(new X509Certificate(kept).fingerprint256);
    expect(await handshake(tls.cert, tls.key, kept, 'localhost')).toBeNull();
    const renewed = await smtpTls({ dataDir: dir, log: silentLogger, now: Date.now() + 800 * 86_400_000 });
    expect(renewed.fingerprint).not.toBe(tls.fingerprint);
    expect(new X509Certificate(renewed.cert).publicKey.asymmetricKeyType).toBe('ec');
  });

  it('is made once per process in memory: every in-memory server presents the same one', async () => {
    const a = await smtpTls({ dataDir: null, log: silentLogger });
    const b = await smtpTls({ dataDir: null, log: silentLogger });
    expect(a.path).toBeNull();
    expect(b.fingerprint).toBe(a.fingerprint);
  });
});

describe('a certificate brought with --smtp-tls-cert and --smtp-tls-key', () => {
  it('is used as given', async () => {
    const dir = tempDir();
    const { cert, key } = await makeCertificate(Date.now());
    writeFileSync(join(dir, 'c.pem'), cert);
    writeFileSync(join(dir, 'k.pem'), key);
    const given = await smtpTls({
      dataDir: null,
      certFile: join(dir, 'c.pem'),
      keyFile: join(dir, 'k.pem'),
      log: silentLogger,
    });
    expect(given.path).toBe(join(dir, 'c.pem'));
    expect(given.fingerprint).toBe(new X509Certificate(cert).fingerprint256);
  });

  it('is refused before the start, saying what is wrong: one flag alone, a missing file, a key of another', async () => {
    const dir = tempDir();
    const { cert } = await makeCertificate(Date.now());
    writeFileSync(join(dir, 'c.pem'), cert);
    writeFileSync(join(dir, 'other.pem'), (await makeCertificate(Date.now())).key);
    const tls = (certFile?: string, keyFile?: string) =>
      smtpTls({ dataDir: null, certFile, keyFile, log: silentLogger });
    await expect(tls(join(dir, 'c.pem'))).rejects.toThrow(/--smtp-tls-cert and --smtp-tls-key go together/);
    await expect(tls(join(dir, 'c.pem'), join(dir, 'none.pem'))).rejects.toThrow(/--smtp-tls-key .*none\.pem: ENOENT/);
    await expect(tls(join(dir, 'other.pem'), join(dir, 'other.pem'))).rejects.toThrow(/is not a PEM certificate/);
    const mismatch = tls(join(dir, 'c.pem'), join(dir, 'other.pem'));
    await expect(mismatch).rejects.toThrow(TlsFilesError);
    await expect(mismatch).rejects.toThrow(/does not go with --smtp-tls-cert/);
  });
});
