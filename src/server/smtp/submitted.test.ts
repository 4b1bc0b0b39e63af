// A submitted message as a send request: messages built by nodemailer's composer (what most apps send), parsed back.
// Messages of one part are read by postal-mime, every other by mailparser: the two readings are held to the same
// result, and what postal-mime reads differently (multipart bodies, text attachments) is shown read as sent.
import { simpleParser } from 'mailparser';
import MailComposer from 'nodemailer/lib/mail-composer';
import { describe, expect, it } from 'vitest';
import { SubmittedMessageError, submittedRequest } from './submitted.js';

function mime(mail: ConstructorParameters<typeof MailComposer>[0]): Promise<Buffer> {
  return new MailComposer(mail).compile().build();
}

describe('submittedRequest', () => {
  it('takes From, Subject, Reply-To, text, HTML, attachments and custom headers; recipients from the envelope', async () => {
    const raw = await mime({
      from: 'Shöp Orders <orders@example.test>',
      to: 'Ada <ada@example.org>, grace@example.org',
      cc: 'cc@example.org',
      replyTo: 'help@example.test',
      subject: 'Your receipt ✓',
      text: 'Thanks',
      html: '<p>Thanks <img src="cid:logo@shop"></p>',
      attachments: [
        { filename: 'receipt.pdf', content: Buffer.from('%PDF-1.4') },
        { filename: 'logo.png', content: Buffer.from('png'), cid: 'logo@shop' },
      ],
      headers: { 'X-Entity-Ref-ID': 'order-7', 'Idempotency-Key': 'order-7-receipt', 'X-Svc-Tags': 'forged=1' },
    });
    const { request, idempotencyKey } = await submittedRequest(raw, [
      'ADA@example.org',
      'grace@example.org',
      'cc@example.org',
      'audit@example.org',
    ]);
    expect(idempotencyKey).toBe('order-7-receipt');
    expect(request).toMatchObject({
      from: '"Shöp Orders" <orders@example.test>',
      to: ['"Ada" <ada@example.org>', 'grace@example.org'],
      cc: ['cc@example.org'],
      // In the envelope, named in no header: Bcc.
      bcc: ['audit@example.org'],
      reply_to: ['help@example.test'],
      subject: 'Your receipt ✓',
      text: 'Thanks',
      html: '<p>Thanks <img src="cid:logo@shop"></p>',
      headers: { 'X-Entity-Ref-ID': 'order-7' },
    });
    // In the MIME's order: the inline image (in its multipart/related) comes before the attachment.
    expect(request.attachments).toEqual([
      {
        filename: 'logo.png',
        content: Buffer.from('png').toString('base64'),
        content_type: 'image/png',
        content_id: 'logo@shop',
      },
      { filename: 'receipt.pdf', content: Buffer.from('%PDF-1.4').toString('base64'), content_type: 'application/pdf' },
    ]);
  });

  it('leaves out a header recipient the envelope does not name (it is not sent to)', async () => {
    const raw = await mime({ from: 'a@example.test', to: 'ada@example.org, list@example.org', text: 'x' });
    const { request } = await submittedRequest(raw, ['ada@example.org']);
    expect(request.to).toEqual(['ada@example.org']);
    expect(request.bcc).toBeUndefined();
  });

  it('sends a message with neither a text nor an HTML part with an empty text part', async () => {
    const raw = await mime({
      from: 'a@example.test',
      to: 'ada@example.org',
      attachments: [{ filename: 'report.csv', content: 'a,b\n1,2\n' }],
    });
    const { request } = await submittedRequest(raw, ['ada@example.org']);
    expect(request.text).toBe('');
    expect(request.html).toBeUndefined();
    expect(request.attachments).toHaveLength(1);
  });

  it('names an attachment that has no filename after its place and type', async () => {
    const raw = await mime({
      from: 'a@example.test',
      to: 'ada@example.org',
      text: 'x',
      attachments: [{ content: '{}', contentType: 'application/json' }],
    });
    const { request } = await submittedRequest(raw, ['ada@example.org']);
    expect(request.attachments?.[0]?.filename).toBe('attachment-1.json');
  });

  it('reads a message of one part as mailparser does: addresses, encoded words, charsets, transfer encodings', async () => {
    const messages = [
      await mime({
        from: 'Shöp « Orders » <orders@example.test>',
        to: 'Ada <ada@example.org>',
        subject: 'Ünïcode ✓',
        html: '<p>Grüße</p>',
      }),
      await mime({ from: 'a@example.test', to: 'Team: ada@example.org, bob@example.org;', text: 'Hello\nWorld\n' }),
      await mime({
        from: 'a@example.test',
        to: 'ada@example.org',
        text: `${'é long line '.repeat(40)}\n`,
        textEncoding: 'base64',
      }),
      await mime({
        from: 'a@example.test',
        to: 'ada@example.org',
        cc: 'bob@example.org',
        replyTo: 'r@example.test',
        text: 'café',
        textEncoding: 'quoted-printable',
      }),
      Buffer.from(
        'From: =?ISO-8859-1?Q?Andr=E9?= <andre@example.test>\r\nTo: ada@example.org\r\nSubject: =?utf-8?B?Q2Fmw6k=?=\r\n' +
          'X-Ref: folded\r\n value\r\nContent-Type: text/plain; charset=iso-8859-1\r\nContent-Transfer-Encoding: 8bit\r\n\r\n' +
          'Caf\xe9 cr\xe8me\r\n.dot\r\n',
        'latin1',
      ),
    ];
    for (const raw of messages) {
      const rcpt = ['ada@example.org', 'bob@example.org'];
      const { request } = await submittedRequest(raw, rcpt);
      const full = await simpleParser(raw, { skipHtmlToText: true, skipTextToHtml: true });
      expect(request.subject).toBe(full.subject);
      expect(request.text ?? '').toBe(full.text ?? '');
      expect(request.html).toBe(full.html || undefined);
      expect(request.from).toContain(full.from!.value[0]!.address);
      if (full.from!.value[0]!.name) expect(request.from).toContain(full.from!.value[0]!.name);
    }
  });

  it('takes the parts of a multipart message as sent: no line break of the delimiter at their end', async () => {
    const raw = Buffer.from(
      'From: a@example.test\r\nTo: ada@example.org\r\nContent-Type: multipart/alternative; boundary=b\r\n\r\n' +
        '--b\r\nContent-Type: text/plain\r\n\r\nYour code is 424242\r\n' +
        '--b\r\nContent-Type: text/html\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n<p>Your code is 424242</p>\r\n' +
        '--b--\r\n',
    );
    const { request } = await submittedRequest(raw, ['ada@example.org']);
    expect(request.text).toBe('Your code is 424242');
    expect(request.html).toBe('<p>Your code is 424242</p>');
  });

  it('takes a text attachment whole, its line ends and its last line as they were sent', async () => {
    const raw = Buffer.from(
      'From: a@example.test\r\nTo: ada@example.org\r\nContent-Type: multipart/mixed; boundary=b\r\n\r\n' +
        '--b\r\nContent-Type: text/plain\r\n\r\nSee the invitation.\r\n' +
        '--b\r\nContent-Type: text/calendar; method=REQUEST\r\nContent-Disposition: attachment; filename=invite.ics\r\n\r\n' +
        'BEGIN:VCALENDAR\r\nEND:VCALENDAR\r\n' +
        '--b\r\nContent-Type: text/csv\r\nContent-Disposition: attachment; filename=rows.csv\r\n\r\na,b\r\n1,2' +
        '\r\n--b--\r\n',
    );
    const { request } = await submittedRequest(raw, ['ada@example.org']);
    expect(request.text).toBe('See the invitation.');
    const content = (i: number) => Buffer.from(request.attachments![i]!.content as string, 'base64').toString();
    expect(content(0)).toBe('BEGIN:VCALENDAR\r\nEND:VCALENDAR');
    expect(content(1)).toBe('a,b\r\n1,2');
  });

  it('sends an HTML message with no text part as it came: HTML alone', async () => {
    const raw = await mime({ from: 'a@example.test', to: 'ada@example.org', html: '<p>Hi</p>' });
    const { request } = await submittedRequest(raw, ['ada@example.org']);
    expect(request.html?.trim()).toBe('<p>Hi</p>');
    expect(request.text).toBeUndefined();
  });

  it('refuses a message without From, or whose To names none of the envelope recipients', async () => {
    const noFrom = Buffer.from('To: ada@example.org\r\nSubject: x\r\n\r\nhi\r\n');
    await expect(submittedRequest(noFrom, ['ada@example.org'])).rejects.toThrow(SubmittedMessageError);
    const bccOnly = await mime({ from: 'a@example.test', to: 'undisclosed-recipients:;', text: 'x' });
    await expect(submittedRequest(bccOnly, ['ada@example.org'])).rejects.toThrow(
      /None of the recipients \(RCPT TO\) is in the To header/,
    );
  });
});
