import type { EventType } from '../../contract/events.js';
import type { WebhookEndpoint } from '../../contract/webhook-endpoints.js';
import { newWebhookSecret } from '../../contract/signature.js';
import { DAY, iso } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import type { AccountStore } from '../store/accounts.js';
import type { EventStore } from '../store/events.js';
import type { EndpointRow, WebhookStore } from '../store/webhooks.js';
import type { Deps } from './deps.js';
import { fail, invalidField } from './errors.js';
import { createWebhookAttempts, toAttempt } from './webhook-attempts.js';
import { createEndpointCache, createEventBodies, createWebhookDeliveries } from './webhook-deliveries.js';

/** At most five endpoints per workspace (docs/api.md#webhooks). */
export const MAX_ENDPOINTS = 5;
/** How long the secret before a rotation keeps signing beside the new one (service clock). */
export const ROTATION_OVERLAP = DAY;
/** The attempts `GET /sandbox/webhooks` shows per endpoint. */
export const RECENT_ATTEMPTS = 10;

/**
 * Webhook endpoints (here: added, listed, removed, rotated, enabled) and the delivery of events to them: which
 * endpoints an event goes to, in the transaction that wrote it, and redelivery (webhook-deliveries.ts); each attempt,
 * the seven-attempt schedule and disabling an endpoint that keeps failing (webhook-attempts.ts).
 */
export function createWebhooks(deps: Deps & { store: WebhookStore; events: EventStore; accounts: AccountStore }) {
  const { store, clock, commit } = deps;
  const endpoints = createEndpointCache(deps);
  const bodies = createEventBodies();
  const deliveries = createWebhookDeliveries({ ...deps, endpoints, bodies });
  const attempts = createWebhookAttempts({ ...deps, endpoints, bodies, stop: deliveries.stop });

  function view(e: EndpointRow): WebhookEndpoint {
    const overlap = e.previous_secret_expires_at != null && e.previous_secret_expires_at > clock.now();
    return {
      id: e.id,
      workspace_id: e.workspace_id,
      url: e.url,
      events: e.events,
      secret: e.secret,
      status: e.status,
      created_at: iso(e.created_at),
      disabled_at: e.disabled_at == null ? null : iso(e.disabled_at),
      previous_secret_expires_at: overlap ? iso(e.previous_secret_expires_at!) : null,
      recent_attempts: store.recentAttempts(e.id, RECENT_ATTEMPTS).map(toAttempt),
    };
  }

  const endpointOr404 = (id: string) => store.endpoint(id) ?? fail('not_found', 'No webhook endpoint has this id.');

  return {
    fanout: deliveries.fanout,
    /** Endpoints written outside this service (a seed file's, core/seed-file.ts): the cache is read again. */
    changed: () => endpoints.changed(),

    /** POST /sandbox/webhooks. */
    create(input: { workspace_id: string; url: string; events?: EventType[] }): Promise<WebhookEndpoint> {
      let url: URL | null = null;
      try {
        url = new URL(input.url);
      } catch {
        // reported below
      }
      if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
        throw invalidField(
          'url',
          'must be an absolute http:// or https:// URL, such as http://127.0.0.1:3000/webhooks',
        );
      }
      return commit(() => {
        if (!deps.accounts.workspaceById(input.workspace_id)) fail('not_found', 'No workspace has this id.');
        if (store.countEndpoints(input.workspace_id) >= MAX_ENDPOINTS) {
          fail(
            'endpoint_limit_reached',
            `A workspace has at most ${MAX_ENDPOINTS} webhook endpoints; remove one first.`,
          );
        }
        const row: EndpointRow = {
          id: newId('whk'),
          workspace_id: input.workspace_id,
          url: input.url,
          events: input.events ? [...new Set(input.events)] : null,
          secret: newWebhookSecret(),
          previous_secret: null,
          previous_secret_expires_at: null,
          status: 'active',
          created_at: clock.now(),
          disabled_at: null,
          last_success_at: null,
        };
        store.insertEndpoint(row);
        endpoints.changed();
        return view(row);
      });
    },

    /** GET /sandbox/webhooks: a workspace's endpoints (or every one), with their recent attempts. */
    list: (workspaceId?: string) => store.endpoints(workspaceId).map(view),
    /** GET /sandbox/webhooks: the endpoints (of one workspace, or all) and the names of their workspaces. */
    listing(workspaceId?: string) {
      const data = store.endpoints(workspaceId).map(view);
      const workspaces = [...new Set(data.map((e) => e.workspace_id))].map((id) => ({
        id,
        name: deps.accounts.workspaceById(id)?.name ?? id,
      }));
      return { data, workspaces };
    },

    /** DELETE /sandbox/webhooks/{id}: gone at once, with whatever was still to be delivered to it. */
    remove: (id: string) =>
      commit(() => {
        const e = endpointOr404(id);
        deliveries.stop(e);
        store.deleteEndpoint(id);
      }),

    /** A new secret; the old one signs beside it for ROTATION_OVERLAP of service clock. */
    rotateSecret: (id: string) =>
      commit(() => {
        endpointOr404(id);
        store.rotateSecret(id, newWebhookSecret(), clock.now() + ROTATION_OVERLAP);
        endpoints.changed();
        return view(store.endpoint(id)!);
      }),

    /** Active again (a disabled endpoint); what it missed is not sent again unless redelivered. */
    enable: (id: string) =>
      commit(() => {
        endpointOr404(id);
        if (store.setStatus(id, 'active', clock.now())) endpoints.changed();
        return view(store.endpoint(id)!);
      }),

    redeliver: deliveries.redeliver,
    begin: attempts.begin,
    record: attempts.record,
    attemptsOfEvents: attempts.attemptsOfEvents,
  };
}
export type Webhooks = ReturnType<typeof createWebhooks>;
