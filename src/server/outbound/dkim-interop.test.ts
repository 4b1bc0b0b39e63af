// dkimSign against two independent DKIM implementations, on the raw messages of fixtures/mail (byte-exact): mailauth
// verifies what it signs; nodemailer's and mailauth's own signers, on the same input with the same key, compute the
// same body hash; nodemailer's header canonicalization of the same fields gives the same signature, bit for bit.
import { generateKeyPairSync, sign as rsaSign } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { type DKIMSignOptions, dkimSign as mailauthSign, dkimVerify } from 'mailauth';
import DKIM from 'nodemailer/lib/dkim';
import MessageParser, { type MessageParserHeaderLine } from 'nodemailer/lib/dkim/message-parser';
import nodemailerSign from 'nodemailer/lib/dkim/sign';
import { dkimSign } from './dkim-sign.js';

const { publicKey, privateKey } = generateKeyPairSync('rsa', {
  modulusLength: 2048,
  publicKeyEncoding: { type: 'spki', format: 'der' },
  privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
});
const DOMAIN = 'example.test';
const SELECTOR = 'svc1';
const key = { domainName: DOMAIN, keySelector: SELECTOR, privateKey };
/** DKIM `t=` of every signature here (2026-01-01T00:00:00Z). */
const T = 1_767_225_600;

const record = `v=DKIM1; k=rsa; p=${publicKey.toString('base64')}`;
/** The selector's TXT record, in 255-byte strings as DNS carries it (the shape the sandbox zone hands mailauth). */
const resolver = async (name: string, type: string) => {
  if (type === 'TXT' && name === `${SELECTOR}._domainkey.${DOMAIN}`) return [[record.slice(0, 255), record.slice(255)]];
  throw Object.assign(new Error(`queryTxt ENOTFOUND ${name}`), { code: 'ENOTFOUND' });
};
/** mailauth's verdict on each signature of a message. */
async function verdicts(raw: Buffer): Promise<string[]> {
  const { results } = await dkimVerify(raw, { resolver: resolver as never, curTime: new Date(T * 1000) });
  return results.map((r) => r.status.result);
}

/** A header field's DKIM tags, folding and whitespace removed from the values (`h=From: To` → `From:To`). */
function tagsOf(field: string): Record<string, string> {
  const value = field.slice(field.indexOf(':') + 1).replace(/\r?\n(?=[ \t])/g, '');
  return Object.fromEntries(
    value
      .split(';')
      .filter((t) => t.includes('='))
      .map((t) => [t.slice(0, t.indexOf('=')).trim(), t.slice(t.indexOf('=') + 1).replace(/[ \t]+/g, '')]),
  );
}
/** The first header field of a message, with its continuation lines. */
function firstField(raw: Buffer): string {
  return /^[^\r\n]*(?:\r?\n[ \t][^\r\n]*)*/.exec(raw.toString('latin1'))![0];
}

/** The same message signed by nodemailer's DKIM signer, with the given header list. */
async function signWithNodemailer(raw: Buffer, headerFieldNames: string): Promise<Buffer> {
  const out = new DKIM({ domainName: DOMAIN, keySelector: SELECTOR, privateKey, headerFieldNames }).sign(raw);
  const chunks: Buffer[] = [];
  for await (const chunk of out) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/**
 * The signature of our DKIM-Signature field computed the way nodemailer's signer computes its own (dkim/sign.js):
 * the message's header fields as its parser splits them, the fields of `h=` canonicalized by its relaxedHeaders,
 * then the DKIM-Signature field itself with an empty `b=`, RSA-SHA256 over those bytes. PKCS#1 v1.5 signatures are
 * deterministic, so this equals our `b=` exactly when both canonicalized the same bytes.
 */
async function nodemailerSignature(raw: Buffer, ourField: string): Promise<{ b: string; fieldNames: string }> {
  const parser = new MessageParser();
  const headers = new Promise<MessageParserHeaderLine[]>((resolve) => parser.once('headers', resolve));
  parser.resume();
  parser.end(raw);
  const { headers: canonical, fieldNames } = nodemailerSign.relaxedHeaders(await headers, tagsOf(ourField).h);
  const unsigned = ourField.replace(/b=[^;]*$/, 'b=');
  const signatureField = nodemailerSign.relaxedHeaders(
    [{ key: 'dkim-signature', line: unsigned }],
    'dkim-signature',
  ).headers;
  const data = Buffer.from(canonical + signatureField.replace(/\r\n$/, ''), 'latin1');
  return { b: rsaSign('sha256', data, privateKey).toString('base64'), fieldNames };
}

/** mailauth's own signature of the message (with the same key and time), prepended to it. */
async function signWithMailauth(raw: Buffer, headerList: string): Promise<Buffer> {
  // At run time mailauth's signer takes its keys from signatureData and the header list as one colon-separated
  // string; its type declarations describe another shape.
  const options = {
    signTime: new Date(T * 1000),
    headerList,
    signatureData: [
      {
        signingDomain: DOMAIN,
        selector: SELECTOR,
        privateKey,
        algorithm: 'rsa-sha256',
        canonicalization: 'relaxed/relaxed',
      },
    ],
  } as unknown as DKIMSignOptions;
  const { signatures, errors } = await mailauthSign(raw, options);
  expect(errors).toEqual([]);
  return Buffer.concat([Buffer.from(signatures, 'latin1'), raw]);
}

/** Where the body of a message we signed starts (our output always separates header and body with an empty line). */
function bodyStart(signed: Buffer): number {
  const i = signed.indexOf('\r\n\r\n');
  expect(i).toBeGreaterThan(0);
  return i + 4;
}

/** The message with one byte changed: the one before the `@` of the From field, which every signature covers. */
function withFromChanged(signed: Buffer): Buffer {
  const text = signed.toString('latin1');
  const from = text.search(/\r\nFrom[ \t]*:/i);
  const at = text.indexOf('@', from);
  expect(from).toBeGreaterThan(0);
  expect(at).toBeLessThan(bodyStart(signed));
  const out = Buffer.from(signed);
  out[at - 1] = out[at - 1] === 0x78 ? 0x79 : 0x78; // x or y
  return out;
}

/** The message with one byte of its body changed (the first that is not whitespace), or one added to an empty one. */
function withBodyChanged(signed: Buffer): Buffer {
  const start = bodyStart(signed);
  let i = start;
  while (i < signed.length && [0x20, 0x09, 0x0d, 0x0a].includes(signed[i]!)) i++;
  if (i === signed.length) return Buffer.concat([signed, Buffer.from('x\r\n')]);
  const out = Buffer.from(signed);
  out[i] = out[i] === 0x78 ? 0x79 : 0x78;
  return out;
}

const MAIL = fileURLToPath(new URL('../../../fixtures/mail/', import.meta.url));
const fixture = (name: string) => readFileSync(MAIL + name);

interface Case {
  file: string;
  what: string;
  /** The message as the other signers get it, when it is not the fixture as it is. */
  forOthers?: (raw: Buffer) => Buffer;
}

/** The hard cases, one fixture each. */
const HARD_CASES: Case[] = [
  { file: 'dkim/lf-only.eml', what: 'LF-only line ends, a field folded with a bare LF, empty lines at the end' },
  { file: 'dkim/crlf.eml', what: 'CRLF line ends' },
  // nodemailer's and mailauth's signers read a bare CR as a byte of the line, while on the way to any receiver
  // SMTP turns it into CRLF (nodemailer's DataStream does); dkimSign signs that form, which is what they are given.
  {
    file: 'dkim/cr-only.eml',
    what: 'bare CR line ends and a stray CR',
    forOthers: (raw) => Buffer.from(raw.toString('latin1').replace(/\r(?!\n)/g, '\r\n'), 'latin1'),
  },
  { file: 'dkim/repeated-headers.eml', what: 'two Received, two X-Tag and two X-Svc-Tags fields' },
  {
    file: 'dkim/folded-headers.eml',
    what: 'fields folded with spaces and tabs, a value starting on a continuation line, a tab before a colon',
  },
  { file: 'dkim/long-lines.eml', what: 'body lines of 77, 899, 900 and 998 octets' },
  {
    file: 'dkim/trailing-whitespace.eml',
    what: 'trailing spaces and tabs, whitespace-only and empty lines at the end of the body',
  },
  { file: 'dkim/8bit-body.eml', what: '8-bit body bytes (ISO-8859-1, including A0, 85 and FF)' },
  { file: 'dkim/utf8-headers-raw.eml', what: 'raw UTF-8 in From, To and Subject' },
  { file: 'dkim/utf8-headers-encoded.eml', what: 'RFC 2047 encoded words (B and Q), folded between words' },
  { file: 'dkim/empty-body.eml', what: 'an empty body' },
  { file: 'dkim/crlf-only-body.eml', what: 'a body of only CRLFs' },
  {
    file: 'dkim/multipart.eml',
    what: "nodemailer's multipart/mixed: text and HTML alternatives, two attachments, the text's own bare LFs",
  },
];
/** The sink's raw-mail fixtures too: a body without a final line break, no body at all, groups, … */
const SINK_FIXTURES: Case[] = readdirSync(MAIL)
  .filter((f) => f.endsWith('.eml'))
  .map((file) => ({ file, what: 'a fixture of the sink’s header parse' }));
// A message without a body may end with its header, with no empty line after it (RFC 5322 section 3.5). dkimSign adds the
// line; without it nodemailer's signature is one mailauth cannot find, and mailauth's signer makes none.
const headersOnly = SINK_FIXTURES.find((c) => c.file === 'headers-only.eml')!;
headersOnly.forOthers = (raw) => Buffer.concat([raw, Buffer.from('\r\n\r\n')]);

describe.each([...HARD_CASES, ...SINK_FIXTURES])('dkimSign on $file ($what)', ({ file, forOthers }) => {
  let raw: Buffer;
  let signed: Buffer;
  let ourField: string;
  let ours: Record<string, string>;
  beforeAll(() => {
    raw = fixture(file);
    signed = dkimSign(raw, key, T);
    ourField = firstField(signed);
    ours = tagsOf(ourField);
    if (forOthers) raw = forOthers(raw);
  });

  it('mailauth verifies the signed message: pass', async () => {
    expect(
      ourField.startsWith(
        'DKIM-Signature: v=1; a=rsa-sha256; c=relaxed/relaxed; d=example.test; s=svc1; t=1767225600;',
      ),
    ).toBe(true);
    expect(ours.h!.split(':')).toContain('from');
    expect(await verdicts(signed)).toEqual(['pass']);
  });

  it("nodemailer's signer, given our header list, signs the same fields with the same body hash, and passes", async () => {
    const theirs = await signWithNodemailer(raw, ours.h!);
    const tags = tagsOf(firstField(theirs));
    expect(tags.h).toBe(ours.h);
    expect(tags.bh).toBe(ours.bh);
    expect(await verdicts(theirs)).toEqual(['pass']);
  });

  it("nodemailer's canonicalization of those fields and our DKIM-Signature field gives our b= exactly", async () => {
    const { b, fieldNames } = await nodemailerSignature(raw, ourField);
    expect(fieldNames).toBe(ours.h);
    expect(b).toBe(ours.b);
  });

  it("mailauth's signer at the same time computes the same body hash, and passes", async () => {
    const theirs = await signWithMailauth(raw, ours.h!);
    const tags = tagsOf(firstField(theirs));
    expect(tags.t).toBe(String(T));
    expect(tags.bh).toBe(ours.bh);
    // It signs every occurrence of each listed name, bottom-up: the same names, in another order.
    expect(new Set(tags.h!.toLowerCase().split(':'))).toEqual(new Set(ours.h!.split(':')));
    expect(await verdicts(theirs)).toEqual(['pass']);
  });

  it('a changed byte in a signed header fails; a changed byte in the body is neutral (body hash mismatch)', async () => {
    expect(await verdicts(withFromChanged(signed))).toEqual(['fail']);
    expect(await verdicts(withBodyChanged(signed))).toEqual(['neutral']);
  });
});

describe('dkimSign and the header fields a message repeats', () => {
  it('signs the last X-Svc-Tags only (RFC 6376 section 5.4.2): a change to the first still passes, to the last fails', async () => {
    const signed = dkimSign(fixture('dkim/repeated-headers.eml'), key, T).toString('latin1');
    expect(
      tagsOf(firstField(Buffer.from(signed, 'latin1')))
        .h!.split(':')
        .filter((n) => n === 'x-svc-tags'),
    ).toHaveLength(1);
    const first = signed.replace('X-Svc-Tags: plan=free', 'X-Svc-Tags: plan=pro');
    const last = signed.replace('X-Svc-Tags: plan=pro; team=ops', 'X-Svc-Tags: plan=pro; team=dev');
    expect(first).not.toBe(signed);
    expect(last).not.toBe(signed);
    expect(await verdicts(Buffer.from(first, 'latin1'))).toEqual(['pass']);
    expect(await verdicts(Buffer.from(last, 'latin1'))).toEqual(['fail']);
  });
});

describe('dkimSign and folding', () => {
  it("a signed field refolded on the way (its whitespace changed) still passes; with a fold's whitespace removed it fails", async () => {
    const signed = dkimSign(fixture('dkim/folded-headers.eml'), key, T).toString('latin1');
    const refolded = signed.replace(
      'To: one@dest.example,\r\n two@dest.example,\r\n\tthree',
      'To:   one@dest.example,  two@dest.example,\r\n    three',
    );
    expect(refolded).not.toBe(signed);
    expect(await verdicts(Buffer.from(refolded, 'latin1'))).toEqual(['pass']);
    const joined = signed.replace('two@dest.example,\r\n\tthree', 'two@dest.example,three');
    expect(joined).not.toBe(signed);
    expect(await verdicts(Buffer.from(joined, 'latin1'))).toEqual(['fail']);
  });
});

// RFC 6376 section 3.4.2 counts only SP and HTAB as whitespace in relaxed header canonicalization (WSP); the byte A0 ends
// the UTF-8 of à (C3 A0), 你 (E4 BD A0), Р (D0 A0) and many more, and is part of the value. nodemailer, OpenDKIM and
// dkimpy read it so. mailauth (4.13, and 5.0) collapses it with `\s` as if it were a space, so its verdict on a raw
// UTF-8 field holding that byte is `fail` for any signer that follows the RFC.
describe('dkimSign and the byte A0 in a raw UTF-8 header field (dkim/utf8-header-nbsp-byte.eml)', () => {
  let raw: Buffer;
  let signed: Buffer;
  let ourField: string;
  beforeAll(() => {
    raw = fixture('dkim/utf8-header-nbsp-byte.eml');
    signed = dkimSign(raw, key, T);
    ourField = firstField(signed);
  });

  it('keeps the byte, within and at the end of a value: the same b= as nodemailer’s canonicalization', async () => {
    expect(ourField).toContain('h=from:subject:date:message-id:to:mime-version:content-type;');
    const { b } = await nodemailerSignature(raw, ourField);
    expect(b).toBe(tagsOf(ourField).b);
  });

  it('gets the same verdict from mailauth as nodemailer’s signature of the same message', async () => {
    const theirs = await signWithNodemailer(raw, tagsOf(ourField).h!);
    expect(tagsOf(firstField(theirs)).bh).toBe(tagsOf(ourField).bh);
    expect(await verdicts(signed)).toEqual(await verdicts(theirs));
  });
});
