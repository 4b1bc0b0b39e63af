// The Checks tab's report, as checks.ts hands it over: the summary — the HTML compatibility score and the data it is
// judged by, the counts of errors, warnings and notices, each check's status — then each client's support as a bar,
// worst first, and each check's findings (checks-findings.ts). What comes from the message is shown as text, never
// markup.
import type { CheckFinding, ClientSupport, MessageCheck, MessageChecks } from '../../../contract/checks.js';
import type { CaughtMessage } from '../../../contract/inbox.js';
import { chip, countsOf, groupOf, MARKS, NAMES, plural, type ReportActions } from './checks-findings.js';
import { time } from './clock.js';
import { h } from './dom.js';

type Severity = CheckFinding['severity'];

/** Clients shown before "Show all". */
const CLIENTS_SHOWN = 8;

/** A support share's band: how its bar is coloured (its number is beside it). */
const band = (share: number) => (share < 0.6 ? 'bad' : share < 0.85 ? 'warn' : 'good');

/** A bar `share` (0–1) full. Its width is set through the CSSOM: the page's policy allows no style attribute. */
function bar(share: number): HTMLElement {
  const fill = h('span', { class: 'fill' });
  fill.style.width = `${Math.round(share * 1000) / 10}%`;
  return h('span', { class: 'ck-bar', 'data-band': band(share), 'aria-hidden': 'true' }, fill);
}

/** The score and its data, the counts, when it was checked and the button that checks the links again. */
function summaryOf(r: MessageChecks, actions: ReportActions): HTMLElement {
  const compat = r.checks.find((c) => c.id === 'html-compatibility');
  const links = r.checks.find((c) => c.id === 'links');
  const { score } = r.summary;
  const count = (status: Severity, n: number) =>
    h(
      'li',
      { class: `count ${status}`, 'data-zero': n === 0 ? '' : null },
      h('span', { class: 'mark', 'aria-hidden': 'true' }, MARKS[status]),
      h('strong', {}, String(n)),
      ` ${status}${n === 1 ? '' : 's'}`,
    );
  const refresh = h(
    'button',
    // Busy, it keeps the keyboard (a disabled button would drop it): it only says so.
    {
      type: 'button',
      class: 'small',
      disabled: !links?.links?.length,
      'aria-disabled': actions.refreshing ? 'true' : null,
    },
    actions.refreshing ? 'Checking links…' : 'Check links again',
  );
  refresh.addEventListener('click', () => {
    if (!actions.refreshing) actions.refreshLinks();
  });
  return h(
    'section',
    { class: 'ck-summary', 'aria-label': 'Summary' },
    h(
      'div',
      { class: 'ck-score', 'data-band': score === null ? null : band(score / 100) },
      h(
        'p',
        { class: 'num' },
        score === null ? '–' : String(score),
        h('span', { class: 'of' }, score === null ? '' : '/100'),
      ),
      score === null ? null : bar(score / 100),
      h('p', { class: 'label' }, 'Compatibility'),
    ),
    h(
      'div',
      { class: 'ck-side' },
      h(
        'ul',
        { class: 'ck-counts', 'aria-label': 'Findings' },
        count('error', r.summary.errors),
        count('warning', r.summary.warnings),
        count('notice', r.summary.notices),
      ),
      h(
        'p',
        { class: 'ck-when' },
        h(
          'span',
          {},
          'Checked ',
          time(r.checked_at),
          links && links.checked_at !== r.checked_at ? h('span', {}, ', links ', time(links.checked_at)) : null,
        ),
        refresh,
        actions.refreshing ? h('progress', { class: 'ck-busy', 'aria-label': 'Checking the links again' }) : null,
      ),
    ),
    h(
      'p',
      { class: 'ck-data' },
      score === null
        ? 'No HTML part: no compatibility score.'
        : `Score: the share of the HTML's features each mail client supports, weighted by the clients' market share. ${compat?.data_version ?? ''}`,
    ),
  );
}

/** What a check's row says beside its status: the reason it was skipped, its results, its counts. */
function noteOf(c: MessageCheck): (Node | string)[] {
  if (c.status === 'skipped') return [c.reason ?? 'Skipped.'];
  const parts: string[] = [];
  if (c.results) parts.push(`SPF ${c.results.spf} · DKIM ${c.results.dkim} · DMARC ${c.results.dmarc}`);
  if (c.spam_score !== undefined) parts.push(`score ${c.spam_score} (spam from ${c.spam_threshold ?? '?'})`);
  if (c.links) parts.push(plural(c.links.length, 'URL'));
  const counts = countsOf(c.findings);
  if (counts) parts.push(counts);
  return [parts.join(' · ') || 'nothing found'];
}

/** Each check's status, in the report's order; a name with findings jumps to them. */
function checksListOf(r: MessageChecks): HTMLElement {
  return h(
    'ul',
    { class: 'ck-list', 'aria-label': 'Checks' },
    ...r.checks.map((c) => {
      const name = c.findings.length
        ? h('a', { href: `#ck-${c.id}`, class: 'name', 'data-jump': c.id }, NAMES[c.id])
        : h('span', { class: 'name' }, NAMES[c.id]);
      return h(
        'li',
        { 'data-check': c.id, 'data-status': c.status },
        chip(c.status),
        name,
        h('span', { class: 'note' }, ...noteOf(c)),
      );
    }),
  );
}

/** Each client's support as a bar, least supporting first: a few, then all on demand. */
function clientsOf(clients: ClientSupport[]): HTMLElement {
  const rows = clients.map((c, i) =>
    h(
      'tr',
      { hidden: i >= CLIENTS_SHOWN, 'data-client': c.client },
      h('th', { scope: 'row' }, c.name),
      h('td', { class: 'bar-cell' }, bar(c.support)),
      h('td', { class: 'pct' }, `${Math.round(c.support * 100)} %`),
      h(
        'td',
        {
          class: 'share',
          title: c.market_share === null ? 'No published market share: not weighed in the score' : null,
        },
        c.market_share === null ? '–' : `${c.market_share.toFixed(1)} %`,
      ),
    ),
  );
  const more = clients.length > CLIENTS_SHOWN;
  const all = h('button', { type: 'button', class: 'small', 'aria-expanded': 'false' }, `Show all ${clients.length}`);
  all.addEventListener('click', () => {
    const open = all.getAttribute('aria-expanded') !== 'true';
    rows.forEach((row, i) => {
      row.hidden = !open && i >= CLIENTS_SHOWN;
    });
    all.setAttribute('aria-expanded', String(open));
    all.textContent = open ? `Show the ${CLIENTS_SHOWN} least supporting` : `Show all ${clients.length}`;
  });
  return h(
    'section',
    { class: 'ck-section', 'aria-labelledby': 'ck-clients-h' },
    h(
      'div',
      { class: 'ck-head' },
      h('h3', { id: 'ck-clients-h' }, 'Support by client'),
      h('span', { class: 'muted' }, 'least supporting first'),
      more ? all : null,
    ),
    h(
      'table',
      { class: 'ck-clients' },
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          h('th', { scope: 'col' }, 'Client'),
          h('th', { scope: 'col' }, h('span', { class: 'vh' }, 'Support bar')),
          h('th', { scope: 'col' }, 'Support'),
          h('th', { scope: 'col', title: "Share of opened mail (Litmus, May 2021): the score's weight" }, 'Opens'),
        ),
      ),
      h('tbody', {}, ...rows),
    ),
  );
}

/** The report as the tab shows it. */
export function reportOf(r: MessageChecks, m: CaughtMessage, actions: ReportActions): Node[] {
  const compat = r.checks.find((c) => c.id === 'html-compatibility');
  const clients = new Map((compat?.clients ?? []).map((c) => [c.client, c]));
  const links = new Map((r.checks.find((c) => c.id === 'links')?.links ?? []).map((l) => [l.url, l]));
  const list = checksListOf(r);
  // A check's name jumps to its findings (a button's work: the address keeps only the message).
  list.addEventListener('click', (e) => {
    const a = (e.target as HTMLElement).closest<HTMLAnchorElement>('a[data-jump]');
    if (!a) return;
    e.preventDefault();
    const group = document.getElementById(`ck-${a.dataset.jump}`);
    group?.scrollIntoView({ block: 'start' });
    group?.focus({ preventScroll: true });
  });
  return [
    summaryOf(r, actions),
    list,
    compat?.clients?.length ? clientsOf(compat.clients) : null,
    ...r.checks
      .filter((c) => c.findings.length || c.links?.length)
      .map((check) => groupOf({ m, check, clients, links, actions })),
  ].filter((n): n is HTMLElement => n !== null);
}
