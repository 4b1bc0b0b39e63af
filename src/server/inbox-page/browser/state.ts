// The inbox page's state — the search and page of the list, the open message and its tab, the service clock, the
// webhook endpoints — and the address bar, which holds the search, the page and the open message.
import type { CaughtMessage, CaughtMessageSummary } from '../../../contract/inbox.js';
import type { ClockState } from '../../../contract/clock.js';
import type { WebhookEndpoint } from '../../../contract/webhook-endpoints.js';
import { el } from './dom.js';

export type Workspace = NonNullable<CaughtMessageSummary['workspace']>;
/** An endpoint as the panel shows it: its secret is left out of everything the page keeps. */
export type Endpoint = Pick<
  WebhookEndpoint,
  'id' | 'workspace_id' | 'url' | 'events' | 'status' | 'disabled_at' | 'recent_attempts'
>;
/** The content tabs of an open message (tabs.ts), by id. */
export type Tab = 'html' | 'source' | 'text' | 'headers' | 'raw' | 'checks';
/**
 * What a tab's content may do with the others, handed to it by tabs.ts rather than imported (a tab's module importing
 * tabs.ts would make a cycle): a finding of a check, say, shows its line of the HTML source.
 */
export interface TabContext {
  select(tab: Tab): Promise<void>;
  showSourceLine(n: number): Promise<boolean>;
  /** Reads the tab's badge again (its content learnt something new: the checks' counts, say). */
  updateBadge(tab: Tab): void;
}
/** The HTML preview's width and mode (preview.ts), kept from one message to the next. */
export type PreviewWidth = 'phone' | 'tablet' | 'full';
export type Appearance = 'light' | 'dark' | 'inverted';

export const state = {
  q: '',
  workspace: '',
  after: null as string | null,
  /** The `after` cursors of the pages before this one, for "Newer". */
  history: [] as (string | null)[],
  rows: [] as CaughtMessageSummary[],
  hasMore: false,
  openId: null as string | null,
  open: null as CaughtMessage | null,
  tab: 'html' as Tab,
  remote: false,
  preview: { width: 'full' as PreviewWidth, appearance: 'light' as Appearance },
  newMail: 0,
  clock: { now: 0, mode: 'real' as ClockState['mode'], at: 0 },
  endpoints: null as { endpoints: Endpoint[]; workspaces: Workspace[] } | null,
};

/** Whether the server manages webhook endpoints: the panel, and deliveries under the events of a message. */
export const hooksServed = el('webhooks-panel').hasAttribute('data-served');

/** The search form's fields, which show the address's search. */
export const q = el<HTMLInputElement>('q');
export const workspaceSelect = el<HTMLSelectElement>('workspace');

export function readLocation() {
  const url = new URL(location.href);
  state.q = url.searchParams.get('q') ?? '';
  state.workspace = url.searchParams.get('workspace') ?? '';
  state.after = url.searchParams.get('after');
  const m = /^\/messages\/([^/]+)$/.exec(url.pathname);
  state.openId = m ? decodeURIComponent(m[1] ?? '') : null;
  q.value = state.q;
  workspaceSelect.value = state.workspace;
}

export function urlFor(openId: string | null): string {
  const p = new URLSearchParams();
  if (state.q) p.set('q', state.q);
  if (state.workspace) p.set('workspace', state.workspace);
  if (state.after) p.set('after', state.after);
  const query = p.toString();
  return (openId ? `/messages/${encodeURIComponent(openId)}` : '/') + (query ? `?${query}` : '');
}

/** A new history entry for the state as it is now. */
export const remember = () => history.pushState(null, '', urlFor(state.openId));
