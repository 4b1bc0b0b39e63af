// The relay's rules (`svc serve --relay-url`, `--relay-allow`, `--relay-matching`, `--relay-from`): its URL read and
// shown without its password, and the address patterns that say whom a release or a relay rule may reach.
//
// A pattern is a glob, not a regular expression: `*` stands for any run of characters, `?` for one, everything else
// for itself, matched against a whole address in any case (`*@example.com`, `qa+*@example.org`, `ann@example.com`).
// An address is what people write on these flags, and a glob of one cannot go wrong the ways a regular expression can
// (an unescaped dot, a missing anchor: `.*@example.com` also admits `x@example.com.evil`).

/** The relay as a start settles it: where it is, and what it may do. */
export interface RelayConfig {
  /** The URL as given (with its credentials): only the outbound side opens it; nothing shows or logs it. */
  url: string;
  /** The URL as shown: its password replaced with `***`. */
  shown: string;
  /** The envelope sender of what the relay sends; null: the caught message's own. */
  from: string | null;
  /** Whom a release or a rule may reach (`--relay-allow`); empty: anyone. */
  allow: string[];
  /** Recipients live mail is relayed to as it is caught (`--relay-matching`); empty: no rule. */
  matching: string[];
}

/** What is wrong with a relay URL, or null: `smtp://` or `smtps://`, a host, and at most `?tls=skip-verify`. */
export function relayUrlProblem(url: string): string | null {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return 'give an smtp:// or smtps:// URL, e.g. smtp://user:pass@mail.example.com:587';
  }
  if (u.protocol !== 'smtp:' && u.protocol !== 'smtps:') {
    return `give an smtp:// or smtps:// URL (not ${u.protocol}//), e.g. smtp://user:pass@mail.example.com:587`;
  }
  if (!u.hostname) return 'the URL names no host, e.g. smtp://user:pass@mail.example.com:587';
  for (const [k, v] of u.searchParams) {
    if (k !== 'tls' || v !== 'skip-verify') return `the URL takes only ?tls=skip-verify, not ?${k}=${v}`;
  }
  return null;
}

/** The URL with its password (and nothing else) hidden: what the ready line, the summary, logs and errors show. */
export function redactRelayUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.href.replace(/\/$/, '');
  } catch {
    return '(an invalid relay URL)';
  }
}

/** Whether a pattern (see above) is one: an address-like glob without spaces or angle brackets. */
export function relayPatternProblem(pattern: string): string | null {
  if (!pattern || pattern.length > 320 || /[\s<>,;]/.test(pattern)) {
    return `${JSON.stringify(pattern)} is not an address pattern: give an address or a glob such as *@example.com`;
  }
  return null;
}

function globRegExp(pattern: string): RegExp {
  const body = pattern
    .split('')
    .map((c) => (c === '*' ? '.*' : c === '?' ? '.' : c.replace(/[\\^$.|+()[\]{}]/g, '\\$&')))
    .join('');
  return new RegExp(`^${body}$`, 'i');
}

/** A test of an address against patterns: true when any matches. */
export function addressMatcher(patterns: string[]): (address: string) => boolean {
  const res = patterns.map(globRegExp);
  return (address) => res.some((re) => re.test(address.trim()));
}

/** The address of `Name <addr>` or of a bare address. */
export function bareAddress(value: string): string {
  const m = /<([^<>]*)>\s*$/.exec(value);
  return (m ? m[1]! : value).trim();
}
