import { describe, expect, it } from 'vitest';
import { CORPUS } from '../../test/helpers/mail-corpus.js';
import { chooseLink, findCodes, findLinks, missingCode, missingLink, type MessageLink } from './extract.js';

const text = (t: string, subject: string | null = null) => ({ subject, text: t, html: null });
const html = (h: string, subject: string | null = null) => ({ subject, text: null, html: h });
const code = (m: Parameters<typeof findCodes>[0], pattern?: RegExp | string) => findCodes(m, pattern)[0] ?? null;
const action = (m: Parameters<typeof findCodes>[0]) => chooseLink(findLinks(m), m.subject)?.url ?? null;

describe('findCodes', () => {
  it.each([
    // Labelled, before or after, in any case and form.
    ['Your code is 482913', '482913'],
    ['Your verification code is 482913.', '482913'],
    ['Code: (4829)', '4829'],
    ['code:0042137', '0042137'],
    ['482913 is your Acme verification code', '482913'],
    ['Use 5150 to sign in', '5150'],
    ['Your one-time passcode: 771204', '771204'],
    ['Your PIN is 4821', '4821'],
    // Labelled as something else, or shaped as something else, passed over for the code.
    ['Thanks for order #10423 … Your verification code is 482913', '482913'],
    ['Invoice 20231 is paid. Your login code: 7712', '7712'],
    ['Your code for order 10423 is 482913', '482913'],
    ['Sent 2026-08-01 at 12:30. Invoice INV-2024/7, total 1,250.00; call +1 555-0100. Your code: 771204', '771204'],
    ['Ticket 55120 was updated. Account 77812345. Security code: 6613', '6613'],
    // Digits in groups joined, a letter prefix dropped, capitals and digits when labelled.
    ['Your code: 90 31 17', '903117'],
    ['Your verification code:\n4 8 2 9 1 3', '482913'],
    ['Slack confirmation code: 551-209', '551209'],
    ['G-605112 is your Google verification code.', '605112'],
    ['Your sign-in code is ZX81QA. It expires in 10 minutes.', 'ZX81QA'],
  ])('%j → %s', (t, want) => {
    expect(code(text(t))).toBe(want);
  });

  it('reads the subject too, before the body', () => {
    expect(code(text('Hi Ada,\nSomeone is signing in to account 77812345.', '318604 is your Acme code'))).toBe(
      '318604',
    );
    expect(findCodes(text('Your code is 482913', 'Your code: 482913'))).toEqual(['482913']);
  });

  it('takes a code shown on a line of its own by the line above or below it', () => {
    expect(code(text('Use this code to finish setting up:\n\n  605112  \n\nThis code expires in 24 hours.'))).toBe(
      '605112',
    );
    expect(code(text('Hi Ada,\n\n482913\n\nThis is your sign-in code. Order 10423 ships today.'))).toBe('482913');
  });

  it('is null when nothing reads as a code: ids, amounts, dates, years, addresses, phone numbers', () => {
    for (const t of [
      'Order #1042 confirmed. Total $53.00 USD. Shipping to 12 Byron Street, Portland OR 97205.',
      'Receipt 2231-4410 · Visa – 4242 · Aug 1, 2026 · © 2026 Stripe, 354 Oyster Point Blvd, CA 94080',
      'Booking reference: 4821093. Call +49 30 2593 0120. Hotel Lindenhof, Lindenstraße 44, 10969 Berlin',
      'Welcome! 4821 people joined this week.',
      'Your code is on its way.',
    ]) {
      expect(findCodes(text(t)), t).toEqual([]);
    }
    expect(findCodes({ subject: null, text: null, html: null })).toEqual([]);
  });

  it('counts an unlabelled number only in a mail that names a code, after the labelled ones, never a year', () => {
    expect(findCodes(text('This one: 7777', 'Your code'))).toEqual(['7777']);
    expect(findCodes(text('This one: 7777', 'Welcome'))).toEqual([]);
    expect(findCodes(text('Backup: 1111. Your code is 2222. Since 2024.'))).toEqual(['2222', '1111']);
  });

  it('reads the words of the HTML when the text part holds no code, not its markup nor its URLs', () => {
    const page =
      '<style>.x{width:1200px}</style><a href="https://app.example/?id=5555">x</a>' +
      '<p style="margin:0">Your code is <b>&#51;&#56;4417</b></p>';
    expect(code(html(page))).toBe('384417');
    expect(code({ subject: null, text: 'View it online: https://app.example/view/8812', html: page })).toBe('384417');
    expect(code(text('  Use 5150 to sign in', null))).toBe('5150');
  });

  it('with a pattern: the best candidate it matches whole, or a match of its own standing alone', () => {
    const mail = text('Your code is 482913. Backup code: 1234. Your PIN: ABC-123.');
    expect(code(mail, /^\d{4}$/)).toBe('1234');
    expect(code(mail, '[A-Z]{3}-\\d{3}')).toBe('ABC-123');
    expect(code(mail, /PIN: ([A-Z]+)/)).toBe('ABC');
    expect(code(text('Order 10423, ref 55555'), /\d{5}/)).toBeNull();
    expect(code(text('Hello 31337 world'), /\d{5}/)).toBe('31337');
  });
});

describe('findLinks', () => {
  const roles = (links: MessageLink[]) => links.map((l) => [l.role, l.text, l.url]);

  it('lists each link once with its words, its target and its role, the HTML first', () => {
    const page = `<html><head><link href="https://cdn.example.com/x.css" rel="stylesheet"></head><body>
      <!--[if mso]><v:roundrect href="https://app.example.com/verify?t=1">Verify</v:roundrect><![endif]-->
      <a href="https://news.example.com/web-version/8812">View this email in your browser</a>
      <a href="https://example.com/"><img src="https://example.com/logo.png" alt="Acme"></a>
      <a name="top"></a><a href="mailto:help@example.com">help</a>
      <a class="btn" href='https://app.example.com/verify?token=t0k&amp;next=%2Fhome'>Verify <b>email</b></a>
      <a href="https://app.example.com/verify?token=t0k&next=%2Fhome">https://app.example.com/verify?token=t0k&amp;next=%2Fhome</a>
      <a href="https://twitter.com/acme">Twitter</a> <A HREF=https://example.com/help>Help</A>
      <a href="https://example.com/settings/emails">Manage email preferences</a>
      <a href="https://example.com/u?x=1">Unsubscribe</a></body></html>`;
    const txt =
      'Verify: https://app.example.com/verify?token=t0k&next=%2Fhome\n\nRead https://en.wikipedia.org/wiki/Mail_(protocol)!';
    expect(roles(findLinks({ text: txt, html: page }))).toEqual([
      ['view-in-browser', 'View this email in your browser', 'https://news.example.com/web-version/8812'],
      ['image', 'Acme', 'https://example.com/'],
      ['action', 'Verify email', 'https://app.example.com/verify?token=t0k&next=%2Fhome'],
      ['social', 'Twitter', 'https://twitter.com/acme'],
      ['other', 'Help', 'https://example.com/help'],
      ['preferences', 'Manage email preferences', 'https://example.com/settings/emails'],
      ['unsubscribe', 'Unsubscribe', 'https://example.com/u?x=1'],
      ['other', 'Read', 'https://en.wikipedia.org/wiki/Mail_(protocol)'],
    ]);
  });

  it('gives a text part URL the words that lead to it, on its line or the line above', () => {
    const t =
      'Confirm at https://app.example.com/confirm?t=abc&u=1.\n(see http://localhost:3000/reset/XYZ), or reply\n' +
      '[Sign in](https://example.com/magic/42)\nTo stop these emails, unsubscribe:\n<https://example.com/unsub>';
    expect(roles(findLinks(text(t)))).toEqual([
      ['action', 'Confirm at', 'https://app.example.com/confirm?t=abc&u=1'],
      ['action', 'see', 'http://localhost:3000/reset/XYZ'],
      ['action', 'Sign in', 'https://example.com/magic/42'],
      ['unsubscribe', 'To stop these emails, unsubscribe', 'https://example.com/unsub'],
    ]);
    expect(findLinks(text('Nothing here, not even www.example.com or ftp://files.example.com'))).toEqual([]);
  });

  it("decodes the service's click tracking, keeping the redirect beside the target", () => {
    const target = 'https://app.example.com/reset?t=1&u=ada';
    const payload = Buffer.from(JSON.stringify({ m: 'msg_1', u: target })).toString('base64url');
    const tracked = `http://127.0.0.1:4010/t/c/${payload}.sig-Nature_1`;
    const [link] = findLinks(html(`<a href="${tracked}">Reset password</a>`));
    expect(link).toEqual({ text: 'Reset password', url: target, tracked, role: 'action' });
    // A path that only looks like one, or a payload that is not the service's, stays as it is.
    for (const href of [
      'https://x.example/t/c/abc.def',
      `https://x.example/t/c/${Buffer.from('{"u":1}').toString('base64url')}.x`,
    ]) {
      expect(findLinks(html(`<a href="${href}">x</a>`))[0]).toMatchObject({ url: href, tracked: null });
    }
  });

  it('scans a big or broken HTML part in time linear in its length', () => {
    const open = '<a href="https://example.com/x">'.repeat(50_000);
    expect(findLinks(html(open)).length).toBe(1);
    expect(findLinks(html(`${'<a href="https://e.example/">'.repeat(2)}${'x'.repeat(1 << 20)}`)).length).toBe(1);
  });
});

describe('chooseLink', () => {
  const mail = {
    subject: 'Ada invited you to join Acme',
    text: null,
    html:
      '<a href="https://acme.example/view">View in browser</a><a href="https://acme.example/login">Log in</a>' +
      '<a href="https://acme.example/invite/accept?t=1">Accept invitation</a><a href="https://acme.example/blog">Blog</a>' +
      '<a href="https://acme.example/unsubscribe">Unsubscribe</a>',
  };
  const links = findLinks(mail);

  it("takes the action worded as the mail's purpose, else the first action, else the first link not boilerplate", () => {
    expect(chooseLink(links, mail.subject)?.url).toBe('https://acme.example/invite/accept?t=1');
    expect(chooseLink(links, 'Hello')?.url).toBe('https://acme.example/login');
    expect(
      chooseLink(
        links.filter((l) => l.role !== 'action'),
        'Hello',
      )?.url,
    ).toBe('https://acme.example/blog');
    expect(
      chooseLink(
        links.filter((l) => l.role !== 'action' && l.role !== 'other'),
        'Hello',
      ),
    ).toBeNull();
  });

  it('chooses by text or target, a part in any case or a pattern', () => {
    expect(chooseLink(links, null, { text: 'UNSUB' })?.url).toBe('https://acme.example/unsubscribe');
    expect(chooseLink(links, null, { text: /^log/i })?.url).toBe('https://acme.example/login');
    expect(chooseLink(links, null, { match: '/BLOG' })?.url).toBe('https://acme.example/blog');
    expect(chooseLink(links, null, { match: /\/view$/g })?.url).toBe('https://acme.example/view');
    expect(chooseLink(links, null, { text: 'Log', match: 'invite' })).toBeNull();
  });

  it('says what is missing', () => {
    expect(missingLink([])).toBe('no http(s) link');
    expect(missingLink(links, { text: 'Reset' })).toBe('no link whose text contains "Reset"');
    expect(missingLink(links, { match: /reset/ })).toBe('no link whose target matches /reset/');
    expect(missingLink(links.filter((l) => l.role === 'unsubscribe'))).toBe(
      'no link to act on, only unsubscribe links',
    );
    expect(missingCode()).toBe('nothing that reads as a one-time code');
    expect(missingCode('\\d{6}')).toBe('no code that /\\d{6}/ matches');
  });
});

describe('a corpus of transactional mail, as written', () => {
  it.each(CORPUS.map((m) => [m.name, m] as const))('%s', (_, m) => {
    const parts = { subject: m.subject, text: m.text ?? null, html: m.html ?? null };
    expect(findCodes(parts)[0] ?? null).toBe(m.code);
    if (m.link !== undefined) expect(action(parts)).toBe(m.link);
  });
});
