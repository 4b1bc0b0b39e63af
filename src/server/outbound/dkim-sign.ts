// DKIM signing (RFC 6376, rsa-sha256, relaxed/relaxed). `svc serve` signs on its compose thread (compose.ts),
// synchronously: handing the RSA work on to libuv's thread pool as well only put four more threads in competition
// for the two cores of a small machine (bench/README.md, bench:drain).
import { createHash, createPrivateKey, sign, type KeyObject } from 'node:crypto';

export interface DkimKey {
  domainName: string;
  keySelector: string;
  privateKey: string | KeyObject;
}

/** Header fields signed when present (RFC 6376 section 5.4.1's recommendations). */
const SIGNED_HEADERS = [
  'from',
  'sender',
  'reply-to',
  'subject',
  'date',
  'message-id',
  'to',
  'cc',
  'mime-version',
  'content-type',
  'content-transfer-encoding',
  'in-reply-to',
  'references',
  'list-unsubscribe',
  'x-svc-tags',
];

const CR = 0x0d;
const LF = 0x0a;
const SP = 0x20;
const HTAB = 0x09;

/** Whether bytes [start, end) are only SP and HTAB (or none). */
function blank(b: Buffer, start: number, end: number): boolean {
  for (let i = start; i < end; i++) if (b[i] !== SP && b[i] !== HTAB) return false;
  return true;
}

/** Where the body's last line that is not blank ends (before its CRLF); trailing blank lines are not signed. */
function contentEnd(body: Buffer): number {
  let end = body.length;
  while (end > 0) {
    const lf = body.lastIndexOf(LF, end - 1);
    if (!blank(body, lf + 1, end)) return end;
    if (lf < 0) return 0;
    end = lf - 1;
  }
  return 0;
}

/**
 * The sha256 (base64) of a body (its line ends all CRLF) under relaxed body canonicalization (RFC 6376 section 3.4.4): runs of
 * SP and HTAB become one SP and go at line ends, blank lines at the end go, and a body that is left ends in CRLF. The
 * body is hashed where it lies, in stretches between the lines that need rewriting: a line of base64 never does, and
 * the text form of a 35 MB body, split into lines, was several times its size.
 */
export function relaxedBodyHash(body: Buffer): string {
  const hash = createHash('sha256');
  const end = contentEnd(body);
  // Rewritten lines and the short stretches between them are gathered as text and hashed together: a line of html
  // full of spaces is the common case, and a hash update per line cost more than the line.
  let text = '';
  const flush = () => {
    if (text) hash.update(text, 'latin1');
    text = '';
  };
  const put = (start: number, stop: number) => {
    if (stop - start <= 4096) return void (text += body.toString('latin1', start, stop));
    flush();
    hash.update(body.subarray(start, stop));
  };
  let from = 0; // bytes before `from` are taken
  let sp = body.indexOf(SP);
  let tab = body.indexOf(HTAB);
  for (;;) {
    if (sp >= 0 && sp < from) sp = body.indexOf(SP, from);
    if (tab >= 0 && tab < from) tab = body.indexOf(HTAB, from);
    const ws = sp < 0 ? tab : tab < 0 ? sp : Math.min(sp, tab);
    if (ws < 0 || ws >= end) break;
    const start = body.lastIndexOf(LF, ws) + 1;
    let stop = body.indexOf(CR, ws);
    if (stop < 0 || stop > end) stop = end;
    put(from, start);
    text += body
      .toString('latin1', start, stop)
      .replace(/[ \t]+/g, ' ')
      .replace(/ $/, '');
    // A body of text lines rewrites nearly every line: hashed 64 KiB at a time, not gathered into one string its size.
    if (text.length > 65_536) flush();
    from = stop;
  }
  put(from, end);
  if (end > 0) text += '\r\n';
  flush();
  return hash.digest('base64');
}

/**
 * Relaxed header canonicalization (RFC 6376 section 3.4.2) of one (possibly folded) header field. Whitespace in the value is SP and
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

/** Whether a message has a CR or LF that is not part of a CRLF. */
function bareLineEnds(b: Buffer): boolean {
  for (let i = b.indexOf(LF); i >= 0; i = b.indexOf(LF, i + 1)) if (i === 0 || b[i - 1] !== CR) return true;
  for (let i = b.indexOf(CR); i >= 0; i = b.indexOf(CR, i + 1)) if (b[i + 1] !== LF) return true;
  return false;
}

/**
 * The bytes with every line ending in CRLF: SMTP carries no bare LF or CR (RFC 5321 section 2.3.8), and SMTP clients,
 * nodemailer's among them, turn both into CRLF, so a signature must cover that form. The same Buffer when it is so.
 */
export function crlfLines(b: Buffer): Buffer {
  return bareLineEnds(b) ? Buffer.from(b.toString('latin1').replace(/\r\n?|\n/g, '\r\n'), 'latin1') : b;
}

/**
 * The DKIM-Signature field (with its CRLF) for a message whose lines all end in CRLF and whose header ends with an
 * empty line.
 */
export function dkimField(msg: Buffer, key: DkimKey, nowSeconds: number): string {
  const split = msg.indexOf('\r\n\r\n');
  const head = msg.toString('latin1', 0, split);
  const bh = relaxedBodyHash(msg.subarray(split + 4));

  // For each name in h=, the last unused occurrence, bottom-up (RFC 6376 section 5.4.2).
  const fields = headerFields(head);
  const used = new Set<number>();
  const names: string[] = [];
  const canon: string[] = [];
  for (const name of SIGNED_HEADERS) {
    for (let i = fields.length - 1; i >= 0; i--) {
      const field = fields[i]!;
      if (used.has(i) || field.slice(0, field.indexOf(':')).trim().toLowerCase() !== name) continue;
      used.add(i);
      names.push(name);
      canon.push(relaxedHeader(field));
      break;
    }
  }
  const value = `v=1; a=rsa-sha256; c=relaxed/relaxed; d=${key.domainName}; s=${key.keySelector}; t=${nowSeconds}; h=${names.join(':')}; bh=${bh}; b=`;
  const signed = canon.map((c) => `${c}\r\n`).join('') + relaxedHeader(`DKIM-Signature: ${value}`);
  const signature = sign('sha256', Buffer.from(signed, 'binary'), keyObject(key.privateKey));
  return `DKIM-Signature: ${value}${signature.toString('base64')}\r\n`;
}

/**
 * Returns the message with a DKIM-Signature header prepended, line endings normalised to CRLF first (crlfLines). A
 * message with no body and no empty line after its header gets that line: verifiers (mailauth, nodemailer's parser)
 * find the end of the header by it.
 */
export function dkimSign(raw: Buffer, key: DkimKey, nowSeconds = Math.floor(Date.now() / 1000)): Buffer {
  let msg = crlfLines(raw);
  if (msg.indexOf('\r\n\r\n') < 0)
    msg = Buffer.concat([msg, Buffer.from(msg.subarray(-2).toString('latin1') === '\r\n' ? '\r\n' : '\r\n\r\n')]);
  return Buffer.concat([Buffer.from(dkimField(msg, key, nowSeconds), 'latin1'), msg]);
}
