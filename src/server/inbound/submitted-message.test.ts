// A submitted message as a send request: messages built by nodemailer's composer (what most apps send), parsed back.
import MailComposer from 'nodemailer/lib/mail-composer';
import { describe, expect, it } from 'vitest';
import { SubmittedMessageError, submittedRequest } from './submitted-message.js';

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
    // In the MIME's order: the inline image (in its multipart/related) comes before the attachment. Their content is
    // the bytes mailparser decoded, handed on as they are (no base64 again).
    expect(request.attachments).toEqual([
      { filename: 'logo.png', content: Buffer.from('png'), content_type: 'image/png', content_id: 'logo@shop' },
      { filename: 'receipt.pdf', content: Buffer.from('%PDF-1.4'), content_type: 'application/pdf' },
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

  it('refuses a message without From, or whose To names none of the envelope recipients', async () => {
    const noFrom = Buffer.from('To: ada@example.org\r\nSubject: x\r\n\r\nhi\r\n');
    await expect(submittedRequest(noFrom, ['ada@example.org'])).rejects.toThrow(SubmittedMessageError);
    const bccOnly = await mime({ from: 'a@example.test', to: 'undisclosed-recipients:;', text: 'x' });
    await expect(submittedRequest(bccOnly, ['ada@example.org'])).rejects.toThrow(
      /None of the recipients \(RCPT TO\) is in the To header/,
    );
  });
});
