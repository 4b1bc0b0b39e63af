import { describe, expect, it } from 'vitest';
import { allCodes, allLinks, firstCode, firstLink } from './extract.js';

describe('firstLink', () => {
  it('takes the first http(s) URL of the text, without the sentence around it', () => {
    expect(firstLink('Confirm at https://app.example.com/confirm?t=abc&u=1.\nThanks', null)).toBe(
      'https://app.example.com/confirm?t=abc&u=1',
    );
    expect(firstLink('(see http://localhost:3000/reset/XYZ), or reply', null)).toBe('http://localhost:3000/reset/XYZ');
    expect(firstLink('Open <https://example.com/a> now', null)).toBe('https://example.com/a');
    expect(firstLink('Read https://en.wikipedia.org/wiki/Mail_(protocol)!', null)).toBe(
      'https://en.wikipedia.org/wiki/Mail_(protocol)',
    );
    expect(firstLink('[Sign in](https://example.com/magic/42)', null)).toBe('https://example.com/magic/42');
    expect(firstLink('ftp://files.example.com then https://b.example.com/x', null)).toBe('https://b.example.com/x');
  });

  it('falls back to the first http(s) link of the HTML, entities decoded, when the text has none', () => {
    const html = `<html><head><link href="https://cdn.example.com/x.css" rel="stylesheet"></head><body>
      <a name="top"></a><a href="mailto:help@example.com">help</a>
      <a class="btn" href='https://app.example.com/verify?token=t0k&amp;next=%2Fhome'>Verify</a>
      <a href="https://example.com/second">2</a></body></html>`;
    expect(firstLink('No link in here.', html)).toBe('https://app.example.com/verify?token=t0k&next=%2Fhome');
    expect(firstLink(null, '<A HREF=https://example.com/bare>x</A>')).toBe('https://example.com/bare');
  });

  it('is null when there is no http(s) link anywhere', () => {
    expect(firstLink('Nothing here, not even www.example.com', '<a href="/relative">x</a>')).toBeNull();
    expect(firstLink(null, null)).toBeNull();
  });
});

describe('firstCode', () => {
  it.each([
    ['Your code is 482913', '482913'],
    ['Your code is 482913.', '482913'],
    ['Code: (4829)', '4829'],
    ['code:0042137', '0042137'],
    ['1234567890 is ten digits', '1234567890'],
    ['Sent 2026-08-01 at 12:30. Invoice INV-2024/7, total 1,250.00; call +1 555-0100. Your code: 771204', '771204'],
    ['Order A12345 and ref 12345678901; then 9981', '9981'],
    ['v1.2345 or 3.14159, but 55 or 123 are too short — 24680!', '24680'],
  ])('%j → %s', (text, code) => {
    expect(firstCode(text, null)).toBe(code);
  });

  it('is null without a standalone run of 4 to 10 digits', () => {
    expect(firstCode('Order 123, reference 12345678901, build 2026-08-01, PIN A9999', null)).toBeNull();
    expect(firstCode(null, null)).toBeNull();
  });

  it('reads the words of the HTML when there is no text part, not its markup', () => {
    const html = '<style>.x{width:1200px}</style><p style="margin:0">Your code is <b>&#51;&#56;4417</b></p>';
    expect(firstCode(null, html)).toBe('384417');
    expect(firstCode('  ', '<td width="6000">Use 5150 to sign in</td>')).toBe('5150');
  });
});

describe('allLinks and allCodes', () => {
  it('list every link of the text, then the HTML links not already listed, each once', () => {
    const text = 'Confirm: https://app.example/confirm?t=1. Or unsubscribe (https://app.example/u).';
    const html =
      '<a href="https://app.example/confirm?t=1">Confirm</a> <a href="mailto:x@y">mail</a> <a href=\'https://app.example/help\'>Help</a>';
    expect(allLinks(text, html)).toEqual([
      'https://app.example/confirm?t=1',
      'https://app.example/u',
      'https://app.example/help',
    ]);
    expect(allLinks(null, null)).toEqual([]);
  });

  it('list every code standing alone, once each, passing over dates and ids', () => {
    expect(
      allCodes('Your code is 482913. Backup codes: 1111 2222, again 482913; order INV-2024 of 2024-05-01.', null),
    ).toEqual(['482913', '1111', '2222']);
    expect(allCodes(null, '<p>Code <b>7311</b></p>')).toEqual(['7311']);
  });
});
