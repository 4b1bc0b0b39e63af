// The webhooks panel, when the server manages webhook endpoints: each workspace's endpoints with their status and
// most recent attempts, an Enable button for one disabled by failures, and how to add one while there is none.
import type { WebhookList } from '../../../contract/webhook-endpoints.js';
import { api, say } from './api.js';
import { time } from './clock.js';
import { el, h } from './dom.js';
import { type Endpoint, hooksServed, state } from './state.js';
import { attemptOf, redrawTimeline } from './timeline.js';

/** Attempts shown for each endpoint in the panel, newest first. */
const PANEL_ATTEMPTS = 5;
const webhooksPanel = el('webhooks-panel');

/** Webhook endpoints by workspace with their status and recent attempts, when the server manages them. */
export async function loadWebhooks() {
  if (!hooksServed) return;
  let list: WebhookList;
  try {
    list = await api('GET', '/sandbox/webhooks');
  } catch {
    return;
  }
  // Only what the panel shows is kept: not the endpoints' secrets.
  const endpoints = list.data.map(
    ({ id, workspace_id, url, events, status, disabled_at, recent_attempts }): Endpoint => ({
      id,
      workspace_id,
      url,
      events,
      status,
      disabled_at,
      recent_attempts,
    }),
  );
  state.endpoints = { endpoints, workspaces: list.workspaces };
  renderWebhooks();
  // The open message's Redeliver buttons follow the endpoints that would receive a redelivery.
  if (state.open) redrawTimeline(state.open);
  webhooksPanel.hidden = false;
}

let webhooksTimer: ReturnType<typeof setTimeout> | undefined;
/** At most one reload of the panel every 200 ms, however busy the receivers are. */
export function webhooksSoon() {
  if (webhooksTimer !== undefined) return;
  webhooksTimer = setTimeout(() => {
    webhooksTimer = undefined;
    void loadWebhooks();
  }, 200);
}

async function enable(e: Endpoint) {
  try {
    await api('POST', `/sandbox/webhooks/${encodeURIComponent(e.id)}/enable`);
  } catch (err) {
    return say((err as Error).message);
  }
  say(`Webhook endpoint ${e.url} enabled.`);
  await loadWebhooks();
  document.querySelector<HTMLElement>(`#webhooks [data-endpoint-id="${CSS.escape(e.id)}"]`)?.focus();
}

function endpointOf(e: Endpoint): HTMLLIElement {
  const disabled = e.status === 'disabled_by_failures';
  const enableButton = disabled
    ? h(
        'button',
        { type: 'button', class: 'small', 'data-enable': e.id },
        'Enable',
        h('span', { class: 'vh' }, ` ${e.url}`),
      )
    : null;
  enableButton?.addEventListener('click', () => void enable(e));
  const attempts = e.recent_attempts.slice(0, PANEL_ATTEMPTS);
  return h(
    'li',
    { class: 'endpoint', 'data-endpoint-id': e.id, tabindex: '-1' },
    h('code', { class: 'url' }, e.url),
    h(
      'p',
      { class: 'state' },
      h('span', { class: `badge ${e.status}` }, e.status.replace(/_/g, ' ')),
      ' ',
      h('span', { class: 'filter' }, e.events ? e.events.join(', ') : 'all events'),
    ),
    disabled
      ? h(
          'p',
          { class: 'state' },
          'Disabled ',
          e.disabled_at ? time(e.disabled_at) : '',
          ' after seven failed attempts. ',
          enableButton,
        )
      : null,
    attempts.length
      ? h(
          'ol',
          { class: 'attempts', 'aria-label': `Recent attempts to ${e.url}, newest first` },
          ...attempts.map((a) => attemptOf(a, time(a.at), true)),
        )
      : h('p', { class: 'state' }, 'No attempts yet.'),
  );
}

function renderWebhooks() {
  const { endpoints, workspaces } = state.endpoints!;
  // The panel is drawn anew on every change: the focus stays on the Enable button or the endpoint that had it.
  const active = document.activeElement as HTMLElement | null;
  const focused = active?.closest?.('#webhooks [data-enable]')?.getAttribute('data-enable');
  const focusedEndpoint = active?.matches?.('#webhooks li.endpoint') ? active.getAttribute('data-endpoint-id') : null;
  const names = new Map(workspaces.map((w) => [w.id, w.name]));
  const byWorkspace = new Map<string, Endpoint[]>();
  for (const e of endpoints) byWorkspace.set(e.workspace_id, [...(byWorkspace.get(e.workspace_id) ?? []), e]);
  el('webhooks').replaceChildren(
    ...(endpoints.length
      ? [...byWorkspace].map(([id, list]) =>
          h(
            'section',
            { class: 'hooks', 'aria-labelledby': `hooks-${id}` },
            h('h3', { id: `hooks-${id}` }, names.get(id) ?? id),
            h('ul', { class: 'endpoints' }, ...list.map(endpointOf)),
          ),
        )
      : [
          h(
            'p',
            {},
            'No webhook endpoints. Add one with ',
            h('code', {}, 'svc sandbox webhooks add --workspace ID --url URL'),
            '.',
          ),
          h(
            'p',
            {},
            'Or take the events on your machine without one: ',
            h('code', {}, 'svc webhooks listen --forward-to URL'),
            '.',
          ),
        ]),
  );
  if (focused) document.querySelector<HTMLElement>(`#webhooks [data-enable="${CSS.escape(focused)}"]`)?.focus();
  else if (focusedEndpoint)
    document
      .querySelector<HTMLElement>(`#webhooks li.endpoint[data-endpoint-id="${CSS.escape(focusedEndpoint)}"]`)
      ?.focus();
}
