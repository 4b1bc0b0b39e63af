import { describe, expect, it } from 'vitest';
import { ServiceError } from '../errors.js';
import { parseSearch, searchTime, tagsField } from './search.js';

/** The 400 a search answers, as its Problem has it. */
function refusal(q: string) {
  try {
    parseSearch(q);
  } catch (err) {
    expect(err).toBeInstanceOf(ServiceError);
    const e = err as ServiceError;
    return { code: e.code, detail: e.detail, errors: e.extra.errors };
  }
  throw new Error(`${q} was not refused`);
}

describe('parseSearch', () => {
  it('bare words are prefixes in any field; quoted phrases are exact', () => {
    expect(parseSearch('order 1042')).toEqual({
      terms: [
        { field: null, text: 'order', prefix: true },
        { field: null, text: '1042', prefix: true },
      ],
      excluded: [],
      filters: [],
    });
    expect(parseSearch('"your order"')!.terms).toEqual([{ field: null, text: 'your order', prefix: false }]);
  });

  it('to:, from: and subject: limit a word or a phrase to their field, in any case', () => {
    expect(parseSearch('to:bob@example.test FROM:"Shop Team" subject:receipt')!.terms).toEqual([
      { field: 'recipients', text: 'bob@example.test', prefix: true },
      { field: 'sender', text: 'Shop Team', prefix: false },
      { field: 'subject', text: 'receipt', prefix: true },
    ]);
  });

  it('is:, has:, cc:, tag:, status:, before:, after:, larger: and smaller: filter', () => {
    expect(parseSearch('is:unread has:attachment')!.filters).toEqual([
      { kind: 'read', read: false, not: false },
      { kind: 'attachments', not: false },
    ]);
    expect(parseSearch('is:read')!.filters).toEqual([{ kind: 'read', read: true, not: false }]);
    expect(parseSearch('cc:Bob@Example.org')!.filters).toEqual([{ kind: 'cc', text: 'bob@example.org', not: false }]);
    expect(parseSearch('tag:Plan tag:user=Jürgen')!.filters).toEqual([
      { kind: 'tag', needle: ';plan=', not: false },
      { kind: 'tag', needle: ';user=j%c3%bcrgen;', not: false },
    ]);
    expect(parseSearch('status:Bounced')!.filters).toEqual([{ kind: 'status', status: 'bounced', not: false }]);
    expect(parseSearch('after:2026-05-01 before:2026-05-02T09:30')!.filters).toEqual([
      { kind: 'received', before: false, at: Date.parse('2026-05-01T00:00:00Z'), not: false },
      { kind: 'received', before: true, at: Date.parse('2026-05-02T09:30:00Z'), not: false },
    ]);
    expect(parseSearch('larger:10KB smaller:1.5MiB')!.filters).toEqual([
      { kind: 'size', larger: true, bytes: 10_000, not: false },
      { kind: 'size', larger: false, bytes: 1_572_864, not: false },
    ]);
  });

  it('"-" before a word, a phrase or an operator excludes it', () => {
    expect(parseSearch('invoice -draft -"old copy" -from:bot -is:read -tag:plan')).toEqual({
      terms: [{ field: null, text: 'invoice', prefix: true }],
      excluded: [
        { field: null, text: 'draft', prefix: true },
        { field: null, text: 'old copy', prefix: false },
        { field: 'sender', text: 'bot', prefix: true },
      ],
      filters: [
        { kind: 'read', read: true, not: true },
        { kind: 'tag', needle: ';plan=', not: true },
      ],
    });
    // A hyphen inside a word is part of it.
    expect(parseSearch('e-mail')!.terms).toEqual([{ field: null, text: 'e-mail', prefix: true }]);
  });

  it('refuses an operator it does not know with a 400 naming the ones it knows, and a value an operator does not take', () => {
    for (const q of ['label:work', 'tag:x before:soon', '-foo:bar']) {
      const r = refusal(q);
      expect(r.code).toBe('invalid_request');
      expect(r.errors).toEqual([{ path: 'q', code: 'invalid', message: expect.any(String) }]);
    }
    expect(refusal('label:work').detail).toBe(
      'The search (q) is not understood: "label:" is no search operator; the operators are from:, to:, cc:, subject:, ' +
        'tag:, status:, before:, after:, larger:, smaller:, is:read, is:unread, has:attachment, and "-" before a part ' +
        'excludes it (to search for the text "label:work", put it in quotes).',
    );
    expect(refusal('before:soon').errors![0]!.message).toBe(
      'before: takes a date (2026-05-01) or a date-time (2026-05-01T09:30:00Z) (got "soon")',
    );
    expect(refusal('after:2026-02-30').errors![0]!.message).toMatch(/^after: takes a date/);
    expect(refusal('status:lost').errors![0]!.message).toMatch(/^status: takes one of queued, scheduled, .*cancelled/);
    expect(refusal('larger:big').errors![0]!.message).toMatch(/^larger: takes a size such as 10KB/);
    expect(refusal('is:starred').errors![0]!.message).toBe('is: takes read or unread (got "starred")');
    expect(refusal('has:link').errors![0]!.message).toBe('has: takes attachment (got "link")');
    expect(refusal('tag:"two words"').errors![0]!.message).toMatch(/^tag: takes a tag's name, or name=value/);
    // Quoted, or a link, it is text.
    expect(parseSearch('"label:work"')!.terms).toEqual([{ field: null, text: 'label:work', prefix: false }]);
    expect(parseSearch('https://app.example.com/x')!.terms).toEqual([
      { field: null, text: 'https://app.example.com/x', prefix: true },
    ]);
  });

  it('leaves out parts without a letter or digit; nothing left is no search', () => {
    expect(parseSearch('"" * -- to:')!.terms).toEqual([{ field: null, text: 'to:', prefix: true }]);
    expect(parseSearch('   ')).toBeNull();
    expect(parseSearch('to:"')).toBeNull();
    expect(parseSearch('"unclosed phrase')!.terms).toEqual([{ field: null, text: 'unclosed phrase', prefix: false }]);
  });
});

describe('searchTime', () => {
  it('reads dates and date-times, UTC unless an offset is given', () => {
    expect(searchTime('2026-05-01')).toBe(Date.parse('2026-05-01T00:00:00Z'));
    expect(searchTime('2026/05/01')).toBe(Date.parse('2026-05-01T00:00:00Z'));
    expect(searchTime('2026-05-01T09:30:15.250Z')).toBe(Date.parse('2026-05-01T09:30:15.250Z'));
    expect(searchTime('2026-05-01T09:30+02:00')).toBe(Date.parse('2026-05-01T07:30:00Z'));
    expect(searchTime('2026-05-01T09:30-0130')).toBe(Date.parse('2026-05-01T11:00:00Z'));
    for (const bad of ['2026-02-29', '2026-13-01', '2026-5-1', 'yesterday', '2026-05-01T25:00']) {
      expect(searchTime(bad), bad).toBeNull();
    }
  });
});

describe('tagsField', () => {
  it('keeps the last X-Svc-Tags field, its pairs between ";", white space dropped', () => {
    expect(
      tagsField([
        { name: 'X-Svc-Tags', value: 'plan=free' },
        { name: 'Subject', value: 'x' },
        { name: 'x-svc-tags', value: 'plan=pro;  team=ops ;' },
      ]),
    ).toBe(';plan=pro;team=ops;');
    expect(tagsField([{ name: 'Subject', value: 'x' }])).toBeNull();
    expect(tagsField([{ name: 'X-Svc-Tags', value: ' ; ' }])).toBeNull();
  });
});
