// The base URL rules, in a module of their own so the command line can apply them without loading the HTTP client.
import { isIP } from 'node:net';

/** True for `localhost` (and `*.localhost`, RFC 6761), 127.0.0.0/8 and ::1, written any way a URL allows. */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  if (isIP(host) === 4) return host.startsWith('127.');
  if (isIP(host) === 6) return host === '::1' || /^::ffff:127\./.test(host) || /^(0+:){7}0*1$/.test(host);
  return false;
}

/** Parses a base URL; undefined when it is not an absolute http(s) URL. */
export function parseBaseUrl(value: string): URL | undefined {
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url : undefined;
  } catch {
    return undefined;
  }
}

/** Plain HTTP is allowed only to loopback (docs/api.md#basics): anywhere else credentials would travel in clear. */
export function isInsecureBaseUrl(url: URL): boolean {
  return url.protocol === 'http:' && !isLoopbackHost(url.hostname);
}
