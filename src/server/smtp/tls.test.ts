// The certificate of SMTP TLS: made with node-forge's layout (getTBSCertificate, outside its type definitions: pinned
// exactly) and node's signature, it is what TLS clients accept for localhost and 127.0.0.1; kept 0600 and reused, made
// again near its end; one brought with the flags is checked before the start.
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer, connect } from 'node:tls';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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

/** Whether a TLS client trusting `ca` accepts a server presenting `cert` when it connects to `host`. */
async function handshake(cert: Buffer, key: Buffer, ca: Buffer, host: string): Promise<string | null> {
  const server = createServer({ cert, key }, (s) => s.end());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    return await new Promise((resolve) => {
      const socket = connect({
        host: '127.0.0.1',
        port: (server.address() as AddressInfo).port,
        ca,
        servername: host === '127.0.0.1' ? undefined : host,
      });
      socket.once('secureConnect', () => {
        resolve(socket.authorized ? null : String(socket.authorizationError));
        socket.destroy();
      });
      socket.once('error', (err) => resolve(err.message));
    });
  } finally {
    server.close();
  }
}

describe('node-forge as tls.ts knows it', () => {
  it('is the version package.json and the lock pin exactly', () => {
    const installed = createRequire(import.meta.url)('node-forge/package.json').version as string;
    const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8'));
    expect(pkg.dependencies['node-forge']).toBe(installed);
    const lock = JSON.parse(readFileSync(new URL('../../../package-lock.json', import.meta.url), 'utf8'));
    expect(lock.packages[''].dependencies['node-forge']).toBe(installed);
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
