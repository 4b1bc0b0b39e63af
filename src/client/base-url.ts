// The base URL rules, in a module of their own so the command line can apply them without loading the HTTP client.
import { isLoopbackHost } from '../lib/loopback.js';

export { isLoopbackHost };

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
