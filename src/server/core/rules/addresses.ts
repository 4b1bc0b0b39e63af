import { domainToASCII } from 'node:url';

export interface ParsedAddress {
  /** The display name, unquoted, or null. */
  name: string | null;
  /** `local@domain` as given (UTF-8 allowed). */
  address: string;
  /** The domain part, lowercased and in punycode. */
  domain: string;
}

// No controls (CR/LF above all: header injection), no specials outside a quoted display name.
const CONTROL = /[\u0000-\u001f\u007f]/;
const LOCAL = /^[^\s@<>()[\]\\,;:"]{1,64}$/u;

/** Parses `address` or `Name <address>` (RFC 5322 addr-spec, UTF-8 allowed); null when invalid. */
export function parseAddress(input: string): ParsedAddress | null {
  if (CONTROL.test(input)) return null;
  const s = input.trim();
  let name: string | null = null;
  let addr = s;
  const angle = /^(.*?)\s*<([^<>]*)>$/s.exec(s);
  if (angle) {
    name = (angle[1] ?? '').trim();
    addr = (angle[2] ?? '').trim();
    if (name.startsWith('"') && name.endsWith('"') && name.length >= 2)
      name = name.slice(1, -1).replace(/\\(.)/g, '$1');
    else if (/[<>"]/.test(name)) return null;
    if (!name) name = null;
  }
  const at = addr.lastIndexOf('@');
  if (at <= 0 || at === addr.length - 1 || addr.length > 254) return null;
  const local = addr.slice(0, at);
  const host = addr.slice(at + 1);
  if (!LOCAL.test(local) || local.startsWith('.') || local.endsWith('.') || local.includes('..')) return null;
  const ascii = domainToASCII(host.toLowerCase());
  if (!ascii?.includes('.') || !ascii.split('.').every((l) => /^(?!-)[a-z0-9-]{1,63}(?<!-)$/.test(l))) return null;
  return { name, address: `${local}@${host}`, domain: ascii };
}

/** The simulator mailbox an address names (`bounce+label@simulator.test` → `bounce`), or null. */
export function simulatorMailbox(address: string): string | null {
  const m = /^([^@+]+)(?:\+[^@]*)?@simulator\.test$/i.exec(address);
  return m?.[1]?.toLowerCase() ?? null;
}
