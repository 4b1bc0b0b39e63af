// The events of an open `/v1` message: each event with its detail, its webhook deliveries by endpoint with their
// attempts, and a Redeliver button where an active endpoint of the message's workspace takes the event (drawn again
// as the endpoints change). The attempt line is the webhooks panel's too.
import type { CaughtMessage, CaughtMessageEvent } from '../../../contract/inbox.js';
import type { Redelivery, WebhookAttempt, WebhookDelivery } from '../../../contract/webhook-endpoints.js';
import { api, say } from './api.js';
import { exact, h } from './dom.js';
import { state } from './state.js';

/**
 * A value of an event's detail in words: a list (the recipients) as its items joined by commas, an object as its
 * fields, a bounce's text as it is; never JSON.
 */
function valueText(v: unknown): string {
  if (Array.isArray(v)) return v.map(valueText).join(', ');
  if (v !== null && typeof v === 'object') {
    return `(${Object.entries(v)
      .map(([k, x]) => `${k}: ${valueText(x)}`)
      .join(', ')})`;
  }
  return String(v);
}

function detailText(detail: Record<string, unknown>): string {
  return Object.entries(detail)
    .map(([k, v]) => `${k}: ${valueText(v)}`)
    .join(' · ');
}

/** One webhook attempt: outcome, attempt number, time, status code or error, duration (and the event type). */
export function attemptOf(a: WebhookAttempt, when: Node, withType: boolean): HTMLLIElement {
  return h(
    'li',
    { class: 'attempt', 'data-attempt': String(a.attempt), 'data-ok': String(a.ok) },
    h('span', { class: `result ${a.ok ? 'ok' : 'failed'}` }, a.ok ? 'ok' : 'failed'),
    withType ? ` ${a.event_type}` : null,
    ` #${a.attempt} · `,
    when,
    // No-break spaces: a narrow panel wraps between the parts, not inside "HTTP 500" or "12 ms".
    ` · ${(a.error ?? String(a.status_code)).replace(/ /g, '\u00a0')} · ${a.duration_ms}\u00a0ms`,
  );
}

/** An event's webhook deliveries: one entry per endpoint, then each delivery's attempts, oldest first. */
function deliveriesOf(e: CaughtMessageEvent): HTMLElement | null {
  if (!e.deliveries.length) return null;
  const byEndpoint = new Map<string, WebhookDelivery[]>();
  for (const d of e.deliveries) byEndpoint.set(d.endpoint_id, [...(byEndpoint.get(d.endpoint_id) ?? []), d]);
  return h(
    'ul',
    { class: 'deliveries', 'aria-label': `Webhook deliveries of ${e.type}` },
    ...[...byEndpoint].map(([endpointId, deliveries]) =>
      h(
        'li',
        { 'data-endpoint-id': endpointId },
        deliveries[0]?.url
          ? h('code', { class: 'url' }, deliveries[0].url)
          : h('span', {}, `removed endpoint ${endpointId}`),
        ...deliveries.flatMap((d, n) => [
          deliveries.length > 1 ? h('span', { class: 'nth' }, `delivery ${n + 1} of ${deliveries.length}`) : null,
          h(
            'ol',
            { class: 'attempts', 'data-delivery-id': String(d.delivery_id) },
            ...d.attempts.map((a) =>
              attemptOf(a, h('time', { datetime: a.at, title: exact(a.at) }, a.at.slice(11, 19)), false),
            ),
          ),
        ]),
      ),
    ),
  );
}

function redeliverButton(e: CaughtMessageEvent): HTMLButtonElement {
  const button = h(
    'button',
    { type: 'button', class: 'small', 'data-redeliver': e.id },
    'Redeliver',
    h('span', { class: 'vh' }, ` ${e.type}`),
  );
  button.addEventListener('click', async () => {
    try {
      const r = await api<Redelivery>('POST', `/sandbox/events/${encodeURIComponent(e.id)}/redeliver`, {});
      const n = r.endpoint_ids.length;
      say(
        n
          ? `Delivering ${e.type} again to ${n} endpoint${n === 1 ? '' : 's'}.`
          : `No active webhook endpoint takes ${e.type} events.`,
      );
    } catch (err) {
      say((err as Error).message);
    }
  });
  return button;
}

/**
 * Whether a redelivery of an event of this type would go anywhere: an active endpoint of the message's workspace takes
 * it (none is known until the webhooks panel has loaded them, and none where the server manages no endpoints).
 */
function redeliverable(m: CaughtMessage, e: CaughtMessageEvent): boolean {
  // What the relay did (`relay.…`, ids `rly_…`) is the sandbox's own record, not an event webhooks are sent.
  if (e.id.startsWith('rly_')) return false;
  const type = e.type;
  const workspace = m.workspace?.id;
  return (state.endpoints?.endpoints ?? []).some(
    (e) => e.workspace_id === workspace && e.status === 'active' && (e.events === null || e.events.includes(type)),
  );
}

/** The message's events section; null for mail from other programs, which has no events. */
export function timelineOf(m: CaughtMessage): HTMLElement | null {
  if (!m.events) return null;
  return h(
    'section',
    { class: 'section', id: 'timeline', 'aria-labelledby': 'timeline-h' },
    h('h3', { id: 'timeline-h' }, 'Events'),
    m.events.length
      ? h(
          'ol',
          { class: 'timeline' },
          ...m.events.map((e) => {
            const redeliver = redeliverable(m, e);
            return h(
              'li',
              { 'data-type': e.type, 'data-event-id': e.id },
              h('time', { datetime: e.occurred_at, title: exact(e.occurred_at) }, e.occurred_at.slice(11, 23)),
              ' ',
              h('strong', {}, e.type),
              ' ',
              h('span', { class: 'detail' }, detailText(e.detail)),
              redeliver ? ' ' : null,
              redeliver ? redeliverButton(e) : null,
              deliveriesOf(e),
            );
          }),
        )
      : h('p', { class: 'empty' }, 'No events yet.'),
  );
}

/**
 * Draws the open message's events again (they changed, or the endpoints that take them did), the focus kept on the
 * Redeliver button that had it.
 */
export function redrawTimeline(m: CaughtMessage): void {
  const focused = (document.activeElement as HTMLElement | null)
    ?.closest?.('#timeline [data-redeliver]')
    ?.getAttribute('data-redeliver');
  const timeline = timelineOf(m);
  if (timeline) document.getElementById('timeline')?.replaceWith(timeline);
  if (focused) timeline?.querySelector<HTMLElement>(`[data-redeliver="${CSS.escape(focused)}"]`)?.focus();
}
