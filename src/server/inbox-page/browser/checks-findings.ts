// The findings of the Checks tab's report, check by check (checks-report.ts puts the report together): each with its
// severity, title, detail, the clients concerned, the line of the HTML source it points at, a link's answer and
// redirects, and its documentation; the links check's every URL. Everything in a finding that comes from the message
// (URLs, titles, link text) goes into text nodes, never markup; the one address made a link is a finding's
// documentation, and only an http(s) one.
import type { CheckFinding, ClientSupport, LinkResult, MessageCheck } from '../../../contract/checks.js';
import type { CaughtMessage } from '../../../contract/inbox.js';
import { h } from './dom.js';

/** What the report's buttons do (checks.ts). */
export interface ReportActions {
  /** Shows line `n` of the HTML source; `key` names the button, to find it again on coming back. */
  showLine(n: number, key: string): void;
  /** Checks the links again. */
  refreshLinks(): void;
  /** Whether the links are being checked again now. */
  refreshing: boolean;
}

type Status = MessageCheck['status'];
type Severity = CheckFinding['severity'];

export const NAMES: Record<MessageCheck['id'], string> = {
  'html-compatibility': 'HTML compatibility',
  links: 'Links',
  authentication: 'Authentication',
  content: 'Content',
  accessibility: 'Accessibility',
  spam: 'Spam',
};

/** A mark for each status, so that none is told by its colour alone. */
export const MARKS: Record<Status, string> = { error: '✕', warning: '!', notice: 'i', ok: '✓', skipped: '–' };
const RANK: Record<Severity, number> = { error: 0, warning: 1, notice: 2 };

/** Clients named in a finding before "and N more". */
const NAMED = 3;

export const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

export const chip = (status: Status) =>
  h('span', { class: `sev ${status}` }, h('span', { class: 'mark', 'aria-hidden': 'true' }, MARKS[status]), status);

/** `1 error · 3 notices`; '' when there are none. */
export function countsOf(findings: readonly CheckFinding[]): string {
  return (['error', 'warning', 'notice'] as const)
    .map((s) => [s, findings.filter((f) => f.severity === s).length] as const)
    .filter(([, n]) => n > 0)
    .map(([s, n]) => plural(n, s))
    .join(' · ');
}

/** An http(s) address as a URL, else null: a report is not trusted to hold only those. */
function webUrl(s: string | undefined): URL | null {
  try {
    const url = new URL(s ?? '');
    return url.protocol === 'https:' || url.protocol === 'http:' ? url : null;
  } catch {
    return null;
  }
}

/** A finding's clients by name, the most used first: a few, then the rest on demand. */
function affectedOf(ids: string[], clients: Map<string, ClientSupport>): HTMLElement {
  const named = ids
    .map((id) => clients.get(id) ?? { name: id, market_share: null })
    .sort((a, b) => (b.market_share ?? -1) - (a.market_share ?? -1) || a.name.localeCompare(b.name))
    .map((c) => c.name);
  const p = h('p', { class: 'f-clients' }, `${plural(named.length, 'client')}: ${named.slice(0, NAMED).join(', ')}`);
  if (named.length > NAMED) {
    const more = h('button', { type: 'button', class: 'link' }, `and ${named.length - NAMED} more`);
    more.addEventListener('click', () => more.replaceWith(`, ${named.slice(NAMED).join(', ')}`));
    p.append(' ', more);
  }
  return p;
}

/** What a link answered: its status or error, and the redirects it went through. */
function answerOf(f: CheckFinding, link: LinkResult | undefined): HTMLElement {
  const status = link?.status ?? f.status ?? null;
  const error = link?.error ?? null;
  return h(
    'div',
    { class: 'f-url' },
    h('code', {}, f.url!),
    status !== null
      ? h('span', { class: `answer s${String(status)[0]}` }, `answered ${status}`)
      : error
        ? h('span', { class: 'answer s5' }, error)
        : null,
    link?.redirects.length
      ? h(
          'ol',
          { class: 'hops', 'aria-label': 'Redirects' },
          ...link.redirects.map((to) => h('li', {}, h('span', { 'aria-hidden': 'true' }, '→ '), h('code', {}, to))),
        )
      : null,
  );
}

export interface GroupContext {
  m: CaughtMessage;
  check: MessageCheck;
  clients: Map<string, ClientSupport>;
  links: Map<string, LinkResult>;
  actions: ReportActions;
}

function lineButton(line: number, column: number | undefined, key: string, ctx: GroupContext): HTMLElement | null {
  if (!ctx.m.html) return null;
  const b = h(
    'button',
    { type: 'button', class: 'small line', 'data-key': key, title: 'Show this line of the HTML source' },
    `Line ${line}${column ? `:${column}` : ''}`,
  );
  b.addEventListener('click', () => ctx.actions.showLine(line, key));
  return b;
}

function findingOf(f: CheckFinding, key: string, ctx: GroupContext): HTMLLIElement {
  const docs = webUrl(f.docs_url);
  return h(
    'li',
    { class: 'finding', 'data-severity': f.severity, 'data-rule': f.rule },
    chip(f.severity),
    h(
      'div',
      { class: 'f-body' },
      h(
        'p',
        { class: 'f-title' },
        h('strong', {}, f.title),
        f.occurrences ? h('span', { class: 'muted' }, ` · ${f.occurrences} times`) : null,
        ' ',
        h('code', { class: 'f-rule' }, f.rule),
      ),
      f.detail ? h('p', { class: 'f-detail clamp' }, f.detail) : null,
      f.url ? answerOf(f, ctx.links.get(f.url)) : null,
      f.clients?.length ? affectedOf(f.clients, ctx.clients) : null,
      f.line || docs
        ? h(
            'p',
            { class: 'f-actions' },
            f.line ? lineButton(f.line, f.column, key, ctx) : null,
            docs
              ? h(
                  'a',
                  { href: docs.href, target: '_blank', rel: 'noopener noreferrer', class: 'docs' },
                  docs.hostname.replace(/^www\./, ''),
                  h('span', { 'aria-hidden': 'true' }, ' ↗'),
                  h('span', { class: 'vh' }, ' (opens in a new tab)'),
                )
              : null,
          )
        : null,
    ),
  );
}

/** A part shown on demand; its details are measured once it is open. */
function foldOf(summary: string, content: HTMLElement): HTMLDetailsElement {
  const details = h('details', { class: 'ck-more' }, h('summary', {}, summary), content);
  details.addEventListener('toggle', () => unclampDetails(details));
  return details;
}

/** Every link and image URL of the message and its answer (the links check). */
function linksOf(links: LinkResult[], ctx: GroupContext): HTMLElement {
  return foldOf(
    `Every link and image (${links.length})`,
    h(
      'ul',
      { class: 'ck-links' },
      ...links.map((l, i) =>
        h(
          'li',
          {},
          h('code', {}, l.url),
          h(
            'span',
            { class: 'about' },
            [l.kind, l.tracked ? 'tracked' : null].filter(Boolean).join(' · '),
            ' · ',
            l.status !== null
              ? h('span', { class: `answer s${String(l.status)[0]}` }, String(l.status))
              : (l.error ?? 'no answer'),
            l.redirects.length ? ` after ${plural(l.redirects.length, 'redirect')}` : '',
          ),
          l.line ? lineButton(l.line, l.column ?? undefined, `links:url:${i}`, ctx) : null,
        ),
      ),
    ),
  );
}

/** A check's findings, worst first; its notices folded away when there is worse, or many of them. */
export function groupOf(ctx: GroupContext): HTMLElement {
  const { check } = ctx;
  const findings = check.findings
    .map((f, i) => ({ f, key: `${check.id}:${i}` }))
    .sort((a, b) => RANK[a.f.severity] - RANK[b.f.severity]);
  const worse = findings.filter(({ f }) => f.severity !== 'notice');
  const notices = findings.filter(({ f }) => f.severity === 'notice');
  const fold = notices.length > 0 && (worse.length > 0 || notices.length > 3);
  const list = (items: typeof findings) =>
    h('ol', { class: 'findings' }, ...items.map(({ f, key }) => findingOf(f, key, ctx)));
  return h(
    'section',
    { class: 'ck-section ck-group', id: `ck-${check.id}`, 'aria-labelledby': `ck-${check.id}-h`, tabindex: '-1' },
    h(
      'div',
      { class: 'ck-head' },
      h('h3', { id: `ck-${check.id}-h` }, NAMES[check.id]),
      h('span', { class: 'muted' }, countsOf(check.findings)),
    ),
    fold ? (worse.length ? list(worse) : null) : list(findings),
    fold ? foldOf(plural(notices.length, 'notice'), list(notices)) : null,
    check.links?.length ? linksOf(check.links, ctx) : null,
  );
}

/**
 * Gives each detail cut to three lines a button that shows the rest; run once the report is laid out (a detail not
 * cut, or not shown yet, in a folded list, is left whole).
 */
export function unclampDetails(root: ParentNode) {
  for (const p of root.querySelectorAll<HTMLElement>('.f-detail.clamp')) {
    if (!p.clientHeight) continue;
    if (p.scrollHeight <= p.clientHeight + 1) {
      p.classList.remove('clamp');
      continue;
    }
    const more = h('button', { type: 'button', class: 'link' }, 'Show all of it');
    more.addEventListener('click', () => {
      p.classList.remove('clamp');
      more.remove();
    });
    p.after(more);
  }
}
