import { describe, expect, it } from 'vitest';
import { parseSearch } from './search.js';

describe('parseSearch', () => {
  it('bare words are prefixes in any field; quoted phrases are exact', () => {
    expect(parseSearch('order 1042')).toEqual({
      terms: [
        { field: null, text: 'order', prefix: true },
        { field: null, text: '1042', prefix: true },
      ],
    });
    expect(parseSearch('"your order"')).toEqual({ terms: [{ field: null, text: 'your order', prefix: false }] });
  });

  it('to:, from: and subject: limit a word or a phrase to their field, in any case', () => {
    expect(parseSearch('to:bob@example.test FROM:"Shop Team" subject:receipt')!.terms).toEqual([
      { field: 'recipients', text: 'bob@example.test', prefix: true },
      { field: 'sender', text: 'Shop Team', prefix: false },
      { field: 'subject', text: 'receipt', prefix: true },
    ]);
  });

  it('is:unread, is:read and has:attachment filter; an unknown name: is searched as words', () => {
    expect(parseSearch('is:unread has:attachment')).toEqual({ terms: [], read: false, hasAttachments: true });
    expect(parseSearch('is:read')).toEqual({ terms: [], read: true });
    expect(parseSearch('cc:bob')!.terms).toEqual([{ field: null, text: 'cc:bob', prefix: true }]);
  });

  it('leaves out parts without a letter or digit; nothing left is no search', () => {
    expect(parseSearch('"" * -- to:')).toEqual({ terms: [{ field: null, text: 'to:', prefix: true }] });
    expect(parseSearch('   ')).toBeNull();
    expect(parseSearch('"unclosed phrase')!.terms).toEqual([{ field: null, text: 'unclosed phrase', prefix: false }]);
  });
});
