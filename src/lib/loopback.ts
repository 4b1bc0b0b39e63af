// Which hosts are this machine: the one rule for where plain HTTP is allowed (a client's base URL, an attachment's
// URL) and where `svc serve` may listen without TLS.
import { isIP } from 'node:net';

/** True for `localhost` (and `*.localhost`, RFC 6761), 127.0.0.0/8 and ::1, written any way a URL allows. */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  if (isIP(host) === 4) return host.startsWith('127.');
  if (isIP(host) === 6) return host === '::1' || /^::ffff:127\./.test(host) || /^(0+:){7}0*1$/.test(host);
  return false;
}
