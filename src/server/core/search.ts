import type { SinkSearch } from '../store/sink.js';

const FIELDS = { to: 'recipients', from: 'sender', subject: 'subject' } as const;

/** Whether a term has something the search index can match (a letter or a digit). */
const searchable = (s: string) => /[\p{L}\p{N}]/u.test(s);

/**
 * The inbox's search syntax: bare words match any field as prefixes, `"a phrase"` matches exactly, `to:`, `from:`
 * and `subject:` limit a word or a quoted phrase to that field, `is:unread`, `is:read` and `has:attachment` filter.
 * Every part must match. Anything else (an unknown `name:`) is searched as words. Null when nothing is left.
 */
export function parseSearch(q: string): SinkSearch | null {
  const search: SinkSearch = { terms: [] };
  // A part: an optional `name:`, then a quoted phrase or a run of non-space characters.
  for (const m of q.matchAll(/(?:([A-Za-z]+):)?(?:"([^"]*)"?|(\S+))/g)) {
    const name = m[1]?.toLowerCase();
    const quoted = m[2];
    const value = quoted ?? m[3] ?? '';
    if (name === 'is' && (value === 'unread' || value === 'read')) {
      search.read = value === 'read';
      continue;
    }
    if (name === 'has' && /^attachments?$/.test(value)) {
      search.hasAttachments = true;
      continue;
    }
    const field = name && name in FIELDS ? FIELDS[name as keyof typeof FIELDS] : null;
    const text = field || name === undefined ? value : `${m[1]}:${value}`;
    if (searchable(text)) search.terms.push({ field, text, prefix: quoted === undefined });
  }
  return search.terms.length || search.read !== undefined || search.hasAttachments ? search : null;
}
