// `html-compatibility`: every HTML and CSS feature the message uses, judged by caniemail's support data for each mail
// client, with a score weighted by the clients' market share (docs/checks.md).
//
// caniemail (the npm package, pinned exactly, taken through caniemail.ts) finds the features and where they are. Three
// things of its version 2.0.2 are worked around here, each pinned by a test against the library itself
// (html-compatibility.test.ts):
// - It throws when a feature used has no data for one of the clients asked about (most features lack a few), so it
//   is asked about one client only: rainloop.desktop-webmail, which caniemail has tested for one feature, marked
//   "support unknown" for every feature here so that each feature found is reported, with its position. The support
//   of the real clients is then read from the same published data (its `rawData`), as caniemail reads it (the latest
//   version tested of each client).
// - It reports the features of a <style> block at lines counted from the block's start: each block is handed to it
//   on its own and its positions moved to the block's place in the HTML.
// - It matches element names as substrings (an <article> is reported as <rt>, a <table> as <a> and <b>) and misses
//   <h2>–<h6> and the HTML5 semantic elements: element features are found here, from the parsed markup, by the
//   element names caniemail's own titles give.
import type { Element } from 'domhandler';
import type { CheckFinding, ClientSupport } from '../../contract/checks.js';
import { CANIEMAIL_VERSION, caniemail, rawData } from './caniemail.js';
import { MARKET_SHARE, MARKET_SHARE_SOURCE } from './market-share.js';
import { type Markup, type Place, lineIndex, placeOf } from './markup.js';

interface Feature {
  slug: string;
  title: string;
  url: string;
  category: string;
  stats?: Record<string, Record<string, Record<string, string>>>;
  notes_by_num?: Record<string, string> | null;
}

const DATA = rawData as unknown as {
  last_update_date: string;
  nicenames: { family: Record<string, string>; platform: Record<string, string> };
  data: Feature[];
};

/** What the score and support are judged by, as the report names it. */
export const DATA_VERSION = `caniemail ${CANIEMAIL_VERSION} (support data of ${DATA.last_update_date.slice(0, 10)}); market share: ${MARKET_SHARE_SOURCE}`;

const PROBE_FAMILY = 'rainloop';
const PROBE_PLATFORM = 'desktop-webmail';
const PROBE = `${PROBE_FAMILY}.${PROBE_PLATFORM}` as const;
for (const f of DATA.data) {
  f.stats ??= {};
  f.stats[PROBE_FAMILY] = { [PROBE_PLATFORM]: { '0': 'u' } };
}

const FEATURES = new Map(DATA.data.map((f) => [f.title, f]));
const BY_SLUG = new Map(DATA.data.map((f) => [f.slug, f]));

/** The clients judged: every one caniemail has data for, but the probe. */
const CLIENTS: { client: string; family: string; platform: string; name: string }[] = (() => {
  const seen = new Set<string>();
  for (const f of DATA.data) {
    for (const [family, platforms] of Object.entries(f.stats ?? {})) {
      for (const platform of Object.keys(platforms)) seen.add(`${family}.${platform}`);
    }
  }
  seen.delete(PROBE);
  return [...seen].sort().map((client) => {
    const [family, platform] = client.split('.') as [string, string];
    const name = `${DATA.nicenames.family[family] ?? family} (${DATA.nicenames.platform[platform] ?? platform})`;
    return { client, family, platform, name };
  });
})();

/** The element names of caniemail's element features (its titles say them), found here rather than by caniemail. */
const ELEMENTS: ReadonlyMap<string, string> = (() => {
  const special: Record<string, string[]> = {
    'html-h1-h6': ['h1', 'h2', 'h3', 'h4', 'h5', 'h6'],
    'html-lists': ['ul', 'ol', 'dl'],
    'html-address': ['address'],
    'html-image-maps': ['map'],
    'html-svg': ['svg'],
    'html-semantics': [
      'article',
      'aside',
      'details',
      'figcaption',
      'figure',
      'footer',
      'header',
      'main',
      'mark',
      'nav',
      'section',
      'summary',
      'time',
    ],
  };
  const out = new Map<string, string>();
  for (const f of DATA.data) {
    if (f.category !== 'html') continue;
    const tags = special[f.slug] ?? [/^<(\w+)>(?: elements?)?$/.exec(f.title)?.[1]].filter((t) => t !== undefined);
    for (const t of tags) out.set(t as string, f.slug);
  }
  return out;
})();
const ELEMENT_SLUGS = new Set(ELEMENTS.values());

/** Features no HTML message can do without (clients that drop them drop them for everyone): at most worth knowing. */
const SKELETON = new Set(['html-body', 'html-doctype']);

type Support = 'y' | 'a' | 'n' | 'u';

/** A client's support of a feature: the latest version caniemail tested (as caniemail reads it), or unknown. */
function supportOf(f: Feature, client: string): Support {
  const v = latestOf(f, client)?.trim()[0];
  return v === 'y' || v === 'a' || v === 'n' ? v : 'u';
}

/** The notes a client's support of a feature points at (`a #1`). */
function notesOf(f: Feature, client: string): string[] {
  const latest = latestOf(f, client) ?? '';
  return [...latest.matchAll(/#(\d+)/g)]
    .map(([, num = '']) => f.notes_by_num?.[num])
    .filter((n): n is string => Boolean(n));
}

/** What caniemail says of a client's latest version it tested (`a #1`), or undefined when it tested none. */
function latestOf(f: Feature, client: string): string | undefined {
  const [family, platform] = client.split('.') as [string, string];
  const versions = f.stats?.[family]?.[platform] ?? {};
  const latest = Object.keys(versions).sort().at(-1);
  return latest === undefined ? undefined : versions[latest];
}

export interface Compatibility {
  /** 0–100; 100 for HTML that uses no feature any client lacks. */
  score: number;
  clients: ClientSupport[];
  findings: CheckFinding[];
}

/** The features caniemail finds in a piece of HTML or CSS, with where they are (moved by `at` when given). */
function probe(options: { html: string } | { css: string }, at?: Place): { title: string; place: Place | null }[] {
  const { issues } = caniemail({ clients: [PROBE], ...options });
  return (issues.warnings.get(PROBE) ?? []).map((i) => {
    const p = i.position?.start;
    if (!p) return { title: i.title, place: null };
    if (!at) return { title: i.title, place: { line: p.line, column: p.column } };
    return {
      title: i.title,
      place: { line: at.line + p.line - 1, column: p.line === 1 ? at.column + p.column - 1 : p.column },
    };
  });
}

/** The HTML with the text of its <style> blocks blanked (line breaks kept, so every place stays where it was). */
function withoutStyles(m: Markup, blocks: Element[]): string {
  let out = '';
  let from = 0;
  for (const b of blocks) {
    const text = b.children[0];
    if (!text || text.startIndex === null || text.endIndex === null) continue;
    out +=
      m.html.slice(from, text.startIndex) + m.html.slice(text.startIndex, text.endIndex + 1).replace(/[^\r\n]/g, ' ');
    from = text.endIndex + 1;
  }
  return out + m.html.slice(from);
}

/** Every feature the HTML uses, each with the places it is used at (in order). */
function featuresUsed(m: Markup): Map<string, Place[]> {
  const used = new Map<string, Place[]>();
  const add = (slug: string, place: Place | null) => {
    let places = used.get(slug);
    if (!places) used.set(slug, (places = []));
    if (place) places.push(place);
  };
  const styles = m.elements.filter((e) => e.name === 'style');
  for (const { title, place } of probe({ html: withoutStyles(m, styles) })) {
    const f = FEATURES.get(title);
    if (f && !ELEMENT_SLUGS.has(f.slug)) add(f.slug, place);
  }
  for (const s of styles) {
    const text = s.children[0];
    if (text?.type !== 'text' || !text.data.trim()) continue;
    const at = m.at(text.startIndex ?? 0);
    const local = lineIndex(text.data);
    for (const { title, place } of probe({ css: text.data }, at)) {
      const f = FEATURES.get(title);
      if (!f) continue;
      // At-rules come without a place: the first one of their kind in the block is theirs.
      let where = place;
      if (!where && title.startsWith('@')) {
        const i = text.data.indexOf(title);
        if (i >= 0) {
          const p = local(i);
          where = { line: at.line + p.line - 1, column: p.line === 1 ? at.column + p.column - 1 : p.column };
        }
      }
      add(f.slug, where);
    }
  }
  for (const e of m.elements) {
    const slug = ELEMENTS.get(e.name);
    if (slug) add(slug, placeOf(m, e));
  }
  const doctype = m.doc.children.find((n) => n.type === 'directive' && /^!doctype html$/i.test(n.data.trim()));
  if (doctype) add('html-doctype', m.at(doctype.startIndex ?? 0));
  for (const places of used.values()) places.sort((a, b) => a.line - b.line || a.column - b.column);
  return used;
}

/** Clients in words, each family once: `Outlook (Windows, Windows Mail), Gmail (Android)`. */
function list(clients: string[]): string {
  const families = new Map<string, string[]>();
  for (const c of clients) {
    const [family, platform] = c.split('.') as [string, string];
    const platforms = families.get(family) ?? [];
    families.set(family, [...platforms, DATA.nicenames.platform[platform] ?? platform]);
  }
  return [...families].map(([f, p]) => `${DATA.nicenames.family[f] ?? f} (${p.join(', ')})`).join(', ');
}

/** Judges the HTML's features against every client's support. */
export function htmlCompatibility(m: Markup): Compatibility {
  const used = featuresUsed(m);
  const findings: (CheckFinding & { weight: number })[] = [];
  const tally = new Map(CLIENTS.map((c) => [c.client, { known: 0, supported: 0 }]));
  for (const [slug, places] of used) {
    const f = BY_SLUG.get(slug)!;
    const none: string[] = [];
    const partly: string[] = [];
    for (const { client } of CLIENTS) {
      const s = supportOf(f, client);
      if (s === 'u') continue;
      const t = tally.get(client)!;
      t.known++;
      t.supported += s === 'y' ? 1 : s === 'a' ? 0.5 : 0;
      if (s === 'n') none.push(client);
      if (s === 'a') partly.push(client);
    }
    if (!none.length && !partly.length) continue;
    // Unsupported where people read mail (a client with a market share) is likely a problem; elsewhere, or partly
    // supported, it is worth knowing.
    const weight = [...none, ...partly.map((c) => `${c}/2`)].reduce(
      (w, c) => w + (c.endsWith('/2') ? (MARKET_SHARE.get(c.slice(0, -2)) ?? 0) / 2 : (MARKET_SHARE.get(c) ?? 0)),
      0,
    );
    const notes = [...new Set(partly.flatMap((c) => notesOf(f, c)))];
    const detail = [
      none.length ? `Not supported by ${list(none)}.` : '',
      partly.length ? `Partly supported by ${list(partly)}${notes.length ? ` (${notes.join(' ')})` : '.'}` : '',
    ]
      .filter(Boolean)
      .join(' ');
    findings.push({
      severity: !SKELETON.has(slug) && none.some((c) => MARKET_SHARE.has(c)) ? 'warning' : 'notice',
      rule: slug,
      title: f.title,
      detail,
      clients: [...none, ...partly],
      ...(places[0] ? { line: places[0].line, column: places[0].column } : {}),
      ...(places.length > 1 ? { occurrences: places.length } : {}),
      docs_url: f.url,
      weight,
    });
  }
  findings.sort(
    (a, b) =>
      Number(a.severity === 'notice') - Number(b.severity === 'notice') ||
      b.weight - a.weight ||
      (a.line ?? 0) - (b.line ?? 0),
  );
  const clients: ClientSupport[] = CLIENTS.flatMap((c) => {
    const t = tally.get(c.client)!;
    if (used.size && !t.known) return [];
    const support = t.known ? Math.round((t.supported / t.known) * 1000) / 1000 : 1;
    return [{ ...c, support, market_share: MARKET_SHARE.get(c.client) ?? null }];
  }).sort((a, b) => a.support - b.support || (b.market_share ?? 0) - (a.market_share ?? 0));
  let weighted = 0;
  let total = 0;
  for (const c of clients) {
    if (c.market_share === null) continue;
    weighted += c.market_share * c.support;
    total += c.market_share;
  }
  const score = total ? Math.round((weighted / total) * 100) : 100;
  return { score, clients, findings: findings.map(({ weight: _, ...f }) => f) };
}
