// argv → options for `svc inbox …` through the real commander tree: what each flag becomes, and the usage errors
// (exit 2) a person gets before anything runs.
import { describe, expect, it } from 'vitest';
import { parse } from './helpers.js';

describe('svc inbox argv', () => {
  it.each([
    [['inbox'], 'inbox list', { to: undefined, follow: undefined, limit: undefined, after: undefined }],
    [
      ['inbox', '--to', 'ada@example.org', '--limit', '5', '--after', 'eml_1'],
      'inbox list',
      { to: 'ada@example.org', follow: undefined, limit: 5, after: 'eml_1' },
    ],
    [
      ['inbox', 'list', '--to', 'ada@example.org'],
      'inbox list',
      { to: 'ada@example.org', follow: undefined, limit: undefined, after: undefined },
    ],
    [['inbox', 'show', 'eml_1'], 'inbox show', { id: 'eml_1', raw: undefined }],
    [['inbox', 'show', 'eml_1', '--raw'], 'inbox show', { id: 'eml_1', raw: true }],
    [
      ['inbox', 'wait', '--to', 'ada@example.org'],
      'inbox wait',
      { to: 'ada@example.org', subject: undefined, timeout: undefined, since: undefined, extract: undefined },
    ],
    [
      [
        'inbox',
        'wait',
        '--to',
        'ada@example.org',
        '--subject',
        'Your code',
        '--timeout',
        '2m',
        '--since',
        '2026-08-01T12:00:00+02:00',
        '--extract',
        'code',
      ],
      'inbox wait',
      {
        to: 'ada@example.org',
        subject: 'Your code',
        timeout: 120_000,
        since: '2026-08-01T12:00:00+02:00',
        extract: 'code',
      },
    ],
    [
      ['inbox', 'wait', '--to', 'ada@example.org', '--timeout', '0.5', '--extract', 'link'],
      'inbox wait',
      { to: 'ada@example.org', subject: undefined, timeout: 500, since: undefined, extract: 'link' },
    ],
    // Choosing a link or a code asks for it.
    [
      ['inbox', 'wait', '--to', 'ada@example.org', '--link-text', 'Accept invitation'],
      'inbox wait',
      { to: 'ada@example.org', extract: 'link', linkText: 'Accept invitation' },
    ],
    [
      ['inbox', 'wait', '--to', 'ada@example.org', '--extract', 'link', '--link-match', '/reset?'],
      'inbox wait',
      { to: 'ada@example.org', extract: 'link', linkMatch: '/reset?' },
    ],
    [
      ['inbox', 'wait', '--to', 'ada@example.org', '--code-pattern', '[A-Z]{3}-\\d{3}'],
      'inbox wait',
      { to: 'ada@example.org', extract: 'code', codePattern: /[A-Z]{3}-\d{3}/ },
    ],
  ])('svc %j', async (argv, command, opts) => {
    const r = await parse(...argv);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.command).toBe(command);
    expect(r.opts).toEqual(opts);
  });

  it('takes --follow', async () => {
    const r = await parse('inbox', '--follow', '--to', 'ada@example.org');
    expect(r.opts).toEqual({ to: 'ada@example.org', follow: true, limit: undefined, after: undefined });
  });

  it.each([
    [['inbox', '--follow', '--after', 'eml_1'], /--after pages back through older mail; it does not go with --follow/],
    [['inbox', '--limit', '0'], /--limit must be a whole number from 1 to 100/],
    [['inbox', 'bogus'], /unknown command 'bogus'/],
    [['inbox', 'show'], /missing required argument 'id'/],
    [['inbox', 'wait'], /required option '--to <address>' not specified/],
    [
      ['inbox', 'wait', '--to', 'a@example.org', '--extract', 'html'],
      /option '--extract <what>' argument 'html' is invalid. Allowed choices are link, code/,
    ],
    [['inbox', 'wait', '--to', 'a@example.org', '--timeout', 'soon'], /--timeout takes seconds or a duration/],
    [['inbox', 'wait', '--to', 'a@example.org', '--since', 'yesterday'], /--since takes an ISO 8601 time/],
    [
      ['--json', 'inbox', 'wait', '--to', 'a@example.org', '--extract', 'code'],
      /--extract \(and --link-text, --link-match, --code-pattern\) prints one value; --json prints the whole message/,
    ],
    [
      ['--json', 'inbox', 'wait', '--to', 'a@example.org', '--link-text', 'Reset'],
      /prints one value; --json prints the whole message/,
    ],
    [
      ['inbox', 'wait', '--to', 'a@example.org', '--extract', 'code', '--link-text', 'Reset'],
      /--link-text and --link-match choose a link: they go with --extract link, not code/,
    ],
    [
      ['inbox', 'wait', '--to', 'a@example.org', '--extract', 'link', '--code-pattern', '\\d+'],
      /--code-pattern chooses a code: it goes with --extract code, not link/,
    ],
    [
      ['inbox', 'wait', '--to', 'a@example.org', '--code-pattern', '(\\d+'],
      /--code-pattern takes a regular expression \(Invalid regular expression/,
    ],
  ])('svc %j is a usage error (exit 2)', async (argv, message) => {
    const r = await parse(...argv);
    expect(r.code).toBe(2);
    expect(r.command).toBeUndefined();
    expect(r.stderr).toMatch(message);
  });

  it('lists the inbox commands in completions', async () => {
    const tree = ((await parse('completion', 'bash')).opts as { tree: { path: string; options: { flag: string }[] }[] })
      .tree;
    expect(tree.map((t) => t.path)).toEqual(
      expect.arrayContaining(['inbox', 'inbox list', 'inbox show', 'inbox wait']),
    );
    expect(tree.find((t) => t.path === 'inbox wait')!.options.map((o) => o.flag)).toEqual(
      expect.arrayContaining([
        '--to',
        '--subject',
        '--timeout',
        '--since',
        '--extract',
        '--link-text',
        '--link-match',
        '--code-pattern',
        '--json',
      ]),
    );
  });
});
