import { createHash, generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import MailComposer from 'nodemailer/lib/mail-composer';
import { dkimVerify } from 'mailauth';
import { dkimSign, relaxedBodyHash } from './dkim-sign.js';

const { publicKey, privateKey } = generateKeyPairSync('rsa', {
  modulusLength: 2048,
  publicKeyEncoding: { type: 'spki', format: 'der' },
  privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
});
const record = `v=DKIM1; k=rsa; p=${publicKey.toString('base64')}`;
const resolver = async (name: string, type: string) => {
  if (type === 'TXT' && name === 'svc1._domainkey.example.test') return [[record.slice(0, 255), record.slice(255)]];
  throw Object.assign(new Error(`ENOTFOUND ${name}`), { code: 'ENOTFOUND' });
};
const verify = async (raw: Buffer) =>
  ((await dkimVerify(raw, { resolver } as never)).results as { status: { result: string } }[]).map(
    (r) => r.status.result,
  );
const key = { domainName: 'example.test', keySelector: 'svc1', privateKey };

describe('dkimSign', () => {
  it('signs multipart mail with UTF-8 headers, folded lines and trailing whitespace so mailauth passes it', async () => {
    const mime = await new MailComposer({
      from: 'Acme Ünïcode <hello@example.test>',
      to: ['delivered@simulator.test'],
      cc: ['x@example.com'],
      subject: 'A long subject with   spaces and ünïcode '.repeat(4),
      text: 'Hello   \n  world\n\n\n',
      html: '<p>Hello</p>  \n\n',
      headers: { 'X-Svc-Tags': 'plan=pro;  team=a' },
      attachments: [{ filename: 'a.txt', content: 'attached' }],
    })
      .compile()
      .build();
    const signed = await dkimSign(mime, key);
    expect(
      signed.toString().startsWith('DKIM-Signature: v=1; a=rsa-sha256; c=relaxed/relaxed; d=example.test; s=svc1;'),
    ).toBe(true);
    expect(await verify(signed)).toEqual(['pass']);
  });

  it('does not pass a message whose body was changed after signing', async () => {
    const mime = await new MailComposer({
      from: 'a@example.test',
      to: 'b@example.com',
      subject: 'Hi',
      text: 'Pay 10 EUR',
    })
      .compile()
      .build();
    const tampered = Buffer.from((await dkimSign(mime, key)).toString().replace('Pay 10 EUR', 'Pay 99 EUR'));
    expect(await verify(tampered)).not.toContain('pass');
  });

  it('hashes bodies canonicalized as RFC 6376 section 3.4.4 relaxed', () => {
    const bh = (text: string) => createHash('sha256').update(text, 'latin1').digest('base64');
    const hashOf = (body: string) => relaxedBodyHash(Buffer.from(body, 'latin1'));
    expect(hashOf('a  \t b \r\nc\r\n\r\n\r\n')).toBe(bh('a b\r\nc\r\n'));
    expect(hashOf('')).toBe(bh(''));
    expect(hashOf('\r\n \t\r\n')).toBe(bh(''));
    expect(hashOf('no line break at the end \t')).toBe(bh('no line break at the end\r\n'));
    expect(hashOf('a\r\n  \r\n\r\nb\t\tc  d\r\n \t')).toBe(bh('a\r\n\r\n\r\nb c d\r\n'));
  });

  it('hashes a body the same as canonicalizing its text whole, whatever its lines hold', () => {
    // The canonicalization written out on the text (as the signer did before hashing the body where it lies).
    const relaxed = (body: string) => {
      const lines = body.split('\r\n').map((l) => l.replace(/[ \t]+/g, ' ').replace(/ $/, ''));
      while (lines.length && lines[lines.length - 1] === '') lines.pop();
      return lines.length ? `${lines.join('\r\n')}\r\n` : '';
    };
    const pieces = ['QUJD'.repeat(19), ' ', '\t', '  \t ', 'word', '\r\n', '\r\n\r\n', 'é', '.', '='];
    let x = 7;
    for (let n = 0; n < 300; n++) {
      let body = '';
      const length = n % 10 === 0 ? 20_000 : n % 40;
      while (body.length < length) {
        x = (x * 1103515245 + 12345) % 2 ** 31;
        body += pieces[x % pieces.length];
      }
      const expected = createHash('sha256').update(relaxed(body), 'latin1').digest('base64');
      expect(relaxedBodyHash(Buffer.from(body, 'latin1')), JSON.stringify(body.slice(0, 200))).toBe(expected);
    }
  });
});
