import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import MailComposer from 'nodemailer/lib/mail-composer';
import { dkimVerify } from 'mailauth/lib/dkim/verify.js';
import { dkimSign, relaxedBody } from './dkim.js';

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
  ((await dkimVerify(raw, { resolver } as never)).results as { status: { result: string } }[]).map((r) => r.status.result);
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
    }).compile().build();
    const signed = await dkimSign(mime, key);
    expect(signed.toString().startsWith('DKIM-Signature: v=1; a=rsa-sha256; c=relaxed/relaxed; d=example.test; s=svc1;')).toBe(true);
    expect(await verify(signed)).toEqual(['pass']);
  });

  it('does not pass a message whose body was changed after signing', async () => {
    const mime = await new MailComposer({ from: 'a@example.test', to: 'b@example.com', subject: 'Hi', text: 'Pay 10 EUR' }).compile().build();
    const tampered = Buffer.from((await dkimSign(mime, key)).toString().replace('Pay 10 EUR', 'Pay 99 EUR'));
    expect(await verify(tampered)).not.toContain('pass');
  });

  it('canonicalizes bodies as RFC 6376 §3.4.4 relaxed', () => {
    expect(relaxedBody('a  \t b \r\nc\r\n\r\n\r\n')).toBe('a b\r\nc\r\n');
    expect(relaxedBody('')).toBe('');
  });
});
