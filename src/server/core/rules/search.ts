// The inbox's search syntax (docs/local-server.md#searching-caught-mail), parsed into what the inbox store queries: words
// and phrases for the full-text index, and conditions on a message's columns.
import { MESSAGE_STATUSES } from '../../../contract/emails.js';
import { parseSize } from '../../../lib/size.js';
import type { InboxFilter, InboxSearch, InboxTerm } from '../../store/inbox.js';
import { ServiceError } from '../errors.js';

const FIELDS = { to: 'recipients', from: 'sender', subject: 'subject' } as const;

/** Every operator, as the answer to one it does not know lists them. */
export const OPERATORS =
  'from:, to:, cc:, subject:, tag:, status:, before:, after:, larger:, smaller:, is:read, is:unread, has:attachment';

/** Whether a term has something the search index can match (a letter or a digit). */
const searchable = (s: string) => /[\p{L}\p{N}]/u.test(s);

/** A 400 naming the part of `q` that is wrong, and how to write it. */
function invalid(message: string): never {
  throw new ServiceError('invalid_request', `The search (q) is not understood: ${message}.`, {
    errors: [{ path: 'q', code: 'invalid', message }],
  });
}

/**
 * A service time from a date (`2026-05-01`, its start) or a date-time (`2026-05-01T09:30`, seconds and an offset
 * optional; UTC without one), `-` or `/` between the date's parts; null for anything else or a day that does not exist.
 */
export function searchTime(text: string): number | null {
  const m =
    /^(\d{4})[-/](\d{2})[-/](\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(\.\d{1,3})?)?(Z|[+-]\d{2}:?\d{2})?)?$/i.exec(text);
  if (!m) return null;
  const [, y, mo, d, h = '00', mi = '00', s = '00', frac = '', zone = 'Z'] = m;
  const at = Date.parse(
    `${y}-${mo}-${d}T${h}:${mi}:${s}${frac}${zone.length === 5 ? `${zone.slice(0, 3)}:${zone.slice(3)}` : zone}`,
  );
  // Date.parse rolls 2026-02-31 over into March: the day must be the one written.
  const day = new Date(Date.UTC(Number(y), Number(mo) - 1, Number(d)));
  if (!Number.isFinite(at) || day.getUTCMonth() !== Number(mo) - 1 || day.getUTCDate() !== Number(d)) return null;
  return at;
}

/**
 * The tags of a caught message as its tags column keeps them: the last X-Svc-Tags field (the one the service writes
 * and signs), its `name=value` pairs (values percent-encoded, as the service writes them) separated and surrounded by
 * `;`, white space dropped; null without tags.
 */
export function tagsField(headers: { name: string; value: string }[]): string | null {
  const field = headers.filter((h) => h.name.toLowerCase() === 'x-svc-tags').at(-1);
  const pairs = (field?.value ?? '')
    .split(';')
    .map((p) => p.replace(/\s+/g, ''))
    .filter(Boolean);
  return pairs.length ? `;${pairs.join(';')};` : null;
}

/** What `tag:name` or `tag:name=value` looks for in the tags column (lowercase). */
function tagNeedle(value: string): string {
  const eq = value.indexOf('=');
  if (eq < 0) return `;${value.toLowerCase()}=`;
  return `;${value.slice(0, eq).toLowerCase()}=${encodeURIComponent(value.slice(eq + 1)).toLowerCase()};`;
}

/**
 * The inbox's search: bare words match any field as prefixes, `"a phrase"` matches exactly; `to:`, `from:` and
 * `subject:` limit a word or a phrase to that field; `cc:` (a Cc address containing the text), `tag:name[=value]`,
 * `status:`, `before:`/`after:` (service time), `larger:`/`smaller:` (a size), `is:read|unread` and `has:attachment`
 * filter; `-` before any part excludes what it matches. Every part must match. A `name:` that is none of these is a
 * ServiceError (400 `invalid_request`), never a search for nothing; `"quoted"` it is text. Null when nothing is left.
 */
export function parseSearch(q: string): InboxSearch | null {
  const search: InboxSearch = { terms: [], excluded: [], filters: [] };
  // A part: an optional `-`, an optional `name:`, then a quoted phrase or a run of non-space characters.
  for (const m of q.matchAll(/(-)?(?:([A-Za-z]+):)?(?:"([^"]*)"?|(\S+))/g)) {
    const not = m[1] !== undefined;
    const raw = m[2];
    const quoted = m[3];
    const value = quoted ?? m[4] ?? '';
    const name = raw?.toLowerCase();
    const filter = (f: Omit<InboxFilter, 'not'> & Partial<InboxFilter>) =>
      search.filters.push({ ...f, not } as InboxFilter);
    const term = (t: InboxTerm) => {
      if (searchable(t.text)) (not ? search.excluded : search.terms).push(t);
    };

    // `name://…` is a link, searched as words.
    if (name === undefined || value.startsWith('//')) {
      term({ field: null, text: raw === undefined ? value : `${raw}:${value}`, prefix: quoted === undefined });
      continue;
    }
    if (name in FIELDS) {
      term({ field: FIELDS[name as keyof typeof FIELDS], text: value, prefix: quoted === undefined });
      continue;
    }
    switch (name) {
      case 'cc':
        if (value.trim()) filter({ kind: 'cc', text: value.trim().toLowerCase() });
        continue;
      case 'is':
        if (value !== 'read' && value !== 'unread') invalid(`is: takes read or unread (got "${value}")`);
        filter({ kind: 'read', read: value === 'read' });
        continue;
      case 'has':
        if (!/^attachments?$/.test(value)) invalid(`has: takes attachment (got "${value}")`);
        filter({ kind: 'attachments' });
        continue;
      case 'tag':
        if (!/^[A-Za-z0-9_-]{1,64}(=.+)?$/.test(value))
          invalid(`tag: takes a tag's name, or name=value (got "${value}")`);
        filter({ kind: 'tag', needle: tagNeedle(value) });
        continue;
      case 'status': {
        const status = value.toLowerCase();
        if (!(MESSAGE_STATUSES as readonly string[]).includes(status))
          invalid(`status: takes one of ${MESSAGE_STATUSES.join(', ')} (got "${value}")`);
        filter({ kind: 'status', status });
        continue;
      }
      case 'before':
      case 'after': {
        const at = searchTime(value);
        if (at === null)
          invalid(`${name}: takes a date (2026-05-01) or a date-time (2026-05-01T09:30:00Z) (got "${value}")`);
        filter({ kind: 'received', before: name === 'before', at: at! });
        continue;
      }
      case 'larger':
      case 'smaller': {
        const bytes = parseSize(value);
        if (bytes === null) invalid(`${name}: takes a size such as 10KB, 1.5MB or 2MiB (got "${value}")`);
        filter({ kind: 'size', larger: name === 'larger', bytes: bytes! });
        continue;
      }
    }
    invalid(
      `"${raw}:" is no search operator; the operators are ${OPERATORS}, and "-" before a part excludes it ` +
        `(to search for the text "${raw}:${value}", put it in quotes)`,
    );
  }
  return search.terms.length || search.excluded.length || search.filters.length ? search : null;
}
