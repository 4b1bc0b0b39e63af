// DKIM signing (RFC 6376, rsa-sha256, relaxed/relaxed). `svc serve` signs on its compose thread (compose.ts),
// synchronously: handing the RSA work on to libuv's thread pool as well only put four more threads in competition
// for the two cores of a small machine (measured: fewer cores busy, less throughput, more memory).
import { createHash, createPrivateKey, sign, type KeyObject } from 'node:crypto';

export interface DkimKey {
  domainName: string;
  keySelector: string;
  privateKey: string | KeyObject;
}

/** Header fields signed when present (RFC 6376 §5.4.1's recommendations). */
const SIGNED_HEADERS = [
  'from', 'sender', 'reply-to', 'subject', 'date', 'message-id', 'to', 'cc', 'mime-version', 'content-type',
  'content-transfer-encoding', 'in-reply-to', 'references', 'list-unsubscribe', 'x-svc-tags',
];

/** Relaxed body canonicalization (§3.4.4). */
export function relaxedBody(body: string): string {
  const lines = body.split('\r\n').map((l) => l.replace(/[ \t]+/g, ' ').replace(/ $/, ''));
  while (lines.length && lines[lines.length - 1] === '') lines.pop();
  return lines.length ? lines.join('\r\n') + '\r\n' : '';
}

/**
 * Relaxed header canonicalization (§3.4.2) of one (possibly folded) header field. Whitespace in the value is SP and
 * HTAB only: String#trim would also take the byte A0 (U+00A0 in this one-char-per-byte string), which ends the UTF-8
 * of à, 你 and others in a raw UTF-8 field.
 */
function relaxedHeader(field: string): string {
  const i = field.indexOf(':');
  const name = field.slice(0, i).trim().toLowerCase();
  const value = field
    .slice(i + 1)
    .replace(/\r\n(?=[ \t])/g, '')
    .replace(/[ \t]+/g, ' ')
    .replace(/^ | $/g, '');
  return `${name}:${value}`;
}

/** Splits a header block into its fields, keeping folded continuation lines with their field. */
function headerFields(head: string): string[] {
  const out: string[] = [];
  for (const line of head.split('\r\n')) {
    if (/^[ \t]/.test(line) && out.length) out[out.length - 1] += `\r\n${line}`;
    else if (line) out.push(line);
  }
  return out;
}

const pemCache = new Map<string, KeyObject>();
function keyObject(k: DkimKey['privateKey']): KeyObject {
  if (typeof k !== 'string') return k;
  let obj = pemCache.get(k);
  if (!obj) {
    obj = createPrivateKey(k);
    if (pemCache.size > 1000) pemCache.clear();
    pemCache.set(k, obj);
  }
  return obj;
}

/**
 * Returns the message with a DKIM-Signature header prepended, line endings normalised to CRLF first: SMTP carries
 * no bare LF or CR (RFC 5321 §2.3.8), and SMTP clients, nodemailer's among them, turn both into CRLF, so the signature
 * must cover that form. A message with no body and no empty line after its header gets that line: verifiers
 * (mailauth, nodemailer's parser) find the end of the header by it.
 */
export function dkimSign(raw: Buffer, key: DkimKey, nowSeconds = Math.floor(Date.now() / 1000)): Buffer {
  let text = raw.toString('binary').replace(/\r\n?|\n/g, '\r\n');
  let split = text.indexOf('\r\n\r\n');
  if (split < 0) {
    text += text.endsWith('\r\n') ? '\r\n' : '\r\n\r\n';
    split = text.length - 4;
  }
  const head = text.slice(0, split);
  const body = text.slice(split + 4);
  const bh = createHash('sha256').update(relaxedBody(body), 'binary').digest('base64');

  // For each name in h=, the last unused occurrence, bottom-up (§5.4.2).
  const fields = headerFields(head);
  const used = new Set<number>();
  const names: string[] = [];
  const canon: string[] = [];
  for (const name of SIGNED_HEADERS) {
    for (let i = fields.length - 1; i >= 0; i--) {
      if (used.has(i) || fields[i]!.slice(0, fields[i]!.indexOf(':')).trim().toLowerCase() !== name) continue;
      used.add(i);
      names.push(name);
      canon.push(relaxedHeader(fields[i]!));
      break;
    }
  }
  const value = `v=1; a=rsa-sha256; c=relaxed/relaxed; d=${key.domainName}; s=${key.keySelector}; t=${nowSeconds}; h=${names.join(':')}; bh=${bh}; b=`;
  const signed = canon.map((c) => `${c}\r\n`).join('') + relaxedHeader(`DKIM-Signature: ${value}`);
  const signature = sign('sha256', Buffer.from(signed, 'binary'), keyObject(key.privateKey));
  return Buffer.from(`DKIM-Signature: ${value}${signature.toString('base64')}\r\n${text}`, 'binary');
}
