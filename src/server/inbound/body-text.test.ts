import nodemailer from 'nodemailer';
import type Mail from 'nodemailer/lib/mailer/index.js';
import { describe, expect, it } from 'vitest';
import { htmlText } from '../../lib/html.js';
import { glanceBody, MAX_TEXT, previewOf } from './body-text.js';
import { parseHeaders } from './headers.js';

async function build(mail: Mail.Options): Promise<Buffer> {
  const t = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'windows' });
  return (
    (await t.sendMail({ from: 'alice@example.test', to: 'bob@example.test', subject: 's', ...mail })) as unknown as {
      message: Buffer;
    }
  ).message;
}

const glance = async (raw: Buffer) => glanceBody(raw, (await parseHeaders(raw)).lines);
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
  'base64',
);

describe('glanceBody', () => {
  it('reads a plain text body, quoted-printable and UTF-8', async () => {
    const text =
      'Grüße aus Köln — your order 1042 has shipped.\nA second line that is long enough to be wrapped by the quoted-printable encoder of nodemailer, surely.';
    const g = await glance(await build({ text }));
    expect(g).toEqual({ text, indexed: text, hasAttachments: false });
  });

  it('prefers the text part of an alternative, and reads the HTML when there is none', async () => {
    expect((await glance(await build({ text: 'the text part', html: '<p>the <b>html</b> part</p>' }))).text).toBe(
      'the text part',
    );
    const html =
      '<html><head><title>T</title><style>p{color:red}</style></head><body><p>Order&nbsp;1042 &amp; more</p><p>Second&#8212;para</p></body></html>';
    expect((await glance(await build({ html }))).text).toBe('Order 1042 & more\nSecond—para');
  });

  it("indexes the words of the HTML part that the text part lacks, once each, from the HTML's first MAX_TEXT characters", async () => {
    const g = await glance(
      await build({
        text: 'Your order has shipped.',
        html: '<style>p{color:red}</style><p>Your order has shipped.</p><p>Track: <b>ZX81</b> &amp; track&nbsp;again</p>',
      }),
    );
    expect(g.text).toBe('Your order has shipped.');
    expect(g.indexed).toBe('Your order has shipped.\ntrack zx81 again');
    // The same words in another case and layout add nothing.
    expect((await glance(await build({ text: 'HELLO  there', html: '<p>Hello</p><p>there</p>' }))).indexed).toBe(
      'HELLO  there',
    );
    const words = Array.from({ length: MAX_TEXT / 4 }, (_, i) => `w${i.toString(36).padStart(3, '0')}`);
    const long = await glance(await build({ text: 'short', html: `<p>${words.join(' ')}</p>` }));
    expect(long.indexed.startsWith('short\nw000 w001 ')).toBe(true);
    expect(long.indexed).not.toContain(words.at(-1));
    expect(long.indexed.length).toBeLessThanOrEqual('short\n'.length + MAX_TEXT);
  });

  it('marks attachments, but not an inline image the HTML uses by Content-ID', async () => {
    const inline = await build({
      html: '<p>Logo <img src="cid:logo@x"></p>',
      attachments: [{ filename: 'logo.png', content: PNG, cid: 'logo@x' }],
    });
    expect(await glance(inline)).toEqual({ text: 'Logo', indexed: 'Logo', hasAttachments: false });
    const attached = await build({
      text: 'See the report.',
      html: '<p>See the <i>report</i>.</p>',
      attachments: [
        { filename: 'report.csv', content: 'a,b\n1,2\n' },
        { filename: 'logo.png', content: PNG, cid: 'logo@x' },
      ],
    });
    // The HTML says the same words: the search entry is the text alone.
    expect(await glance(attached)).toEqual({
      text: 'See the report.',
      indexed: 'See the report.',
      hasAttachments: true,
    });
    const pdf = await build({
      text: 'x',
      attachments: [{ filename: 'a.pdf', content: Buffer.from('%PDF-1.4'), contentDisposition: 'inline' }],
    });
    expect((await glance(pdf)).hasAttachments).toBe(true);
  });

  it('decodes base64 and other charsets', async () => {
    const raw = Buffer.from(
      [
        'From: a@example.test',
        'Subject: latin',
        'MIME-Version: 1.0',
        'Content-Type: multipart/mixed; boundary="b1"',
        '',
        'preamble --b1 not a delimiter',
        '--b1',
        'Content-Type: text/plain; charset=iso-8859-1',
        'Content-Transfer-Encoding: base64',
        '',
        Buffer.from('Caf\xe9 cr\xe8me', 'latin1').toString('base64'),
        '--b1',
        'Content-Type: message/rfc822',
        '',
        'Subject: inner',
        '',
        'inner body',
        '--b1--',
        '',
      ].join('\r\n'),
    );
    expect(await glance(raw)).toMatchObject({ text: 'Café crème', hasAttachments: true });
  });

  it('keeps the start of a very long body, and a message without a body is empty', async () => {
    const long = 'word '.repeat(40_000);
    expect((await glance(await build({ text: long }))).text).toHaveLength(MAX_TEXT);
    const bare = Buffer.from('From: a@example.test\r\nSubject: nothing\r\n');
    expect(await glance(bare)).toEqual({ text: '', indexed: '', hasAttachments: false });
  });
});

describe('htmlText and previewOf', () => {
  it('drops scripts, comments and tags, and collapses white space', () => {
    expect(htmlText('<script>alert(1)</script><!-- c --><div>a</div>\n\n<div>b &lt;c&gt; &#x41;</div>')).toBe(
      'a\nb <c> A',
    );
  });
  it('an element or a comment left open runs to the end of the document, as a browser reads it; a < never closed is text', () => {
    expect(htmlText('<p>Hello</p><style>p { color: red }')).toBe('Hello');
    expect(htmlText('<p>Hello</p><!-- a comment never closed <p>hidden</p>')).toBe('Hello');
    expect(htmlText(`<p>Hello</p>${'<style'.repeat(50_000)}`)).toBe('Hello');
    expect(htmlText(`1 < 2 and ${'<a'.repeat(3)} <b>bold</b>`)).toBe('1 < 2 and <a<a<a bold');
  });
  it('a preview is one line of at most 200 characters, or null', () => {
    expect(previewOf('Hello\n\n  there')).toBe('Hello there');
    expect(previewOf('x'.repeat(500))).toHaveLength(200);
    expect(previewOf('  \n ')).toBeNull();
  });
});
