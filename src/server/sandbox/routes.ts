// The sandbox routes (docs/local-server.md#sandbox-routes), each a call of core or of the chaos rules shaped as its
// answer: what the sandbox does is decided there, not here.
import type { Core } from '../core/index.js';
import type { SandboxHandlers } from '../http/handlers.js';
import { attachmentHeaders, mediaType, messageCsp, messageDocument } from './caught.js';
import type { Chaos } from './chaos.js';
import { ruleFromRequest } from './chaos-request.js';

/** A caught message this large leaves enough garbage behind, once read for a view, to be worth a collection. */
const BIG_MESSAGE_BYTES = 8 * 1024 * 1024;

/**
 * `collect` starts a full garbage collection (`svc serve` exposes V8's): run after a view of a big message, whose
 * source was read and split to show it, so that an inbox left open does not keep that garbage resident.
 */
export function sandboxRoutes(
  core: Core,
  runDue: () => Promise<number>,
  chaos: Chaos,
  collect?: () => void,
): SandboxHandlers {
  const { accounts, inbox, domains, zone, webhooks, clock } = core;
  const viewed = <T>(id: string, view: T): T => {
    if (collect && inbox.size(id) >= BIG_MESSAGE_BYTES) setImmediate(collect);
    return view;
  };
  /** The caught message a path names: by its own `eml_…` id, or by the `msg_…` id of the `/v1` message it is. */
  const caught = (params: { id?: string }) => inbox.caughtId(params.id!);

  return {
    createInvite: ({ body }) => ({ body: accounts.createInvite(body) }),
    createSandboxWorkspace: ({ body }) => ({ body: accounts.addWorkspace(body.email, body.name, body.role) }),
    suspendWorkspace: ({ params }) => ({ body: accounts.setWorkspaceStatus(params.id!, 'suspended') }),
    activateWorkspace: ({ params }) => ({ body: accounts.setWorkspaceStatus(params.id!, 'active') }),
    closeWorkspace: ({ params }) => ({ body: accounts.setWorkspaceStatus(params.id!, 'closed') }),

    listMessages: ({ query }) => ({ body: inbox.list(query) }),
    listOutbox: ({ query }) => ({ body: inbox.outbox(query) }),
    getMessage: async ({ params }) => {
      const id = caught(params);
      return { body: viewed(id, await inbox.get(id)) };
    },
    getRawMessage: ({ params }) => ({
      raw: { body: new Uint8Array(inbox.raw(caught(params))), contentType: 'message/rfc822' },
      headers: { 'X-Content-Type-Options': 'nosniff', 'Content-Security-Policy': "default-src 'none'; sandbox" },
    }),
    getMessageHtml: async ({ params, query }) => {
      const id = caught(params);
      return {
        raw: {
          body: messageDocument(viewed(id, await inbox.html(id)), query.appearance),
          contentType: 'text/html; charset=utf-8',
        },
        headers: {
          'Content-Security-Policy': messageCsp(query.remote_images === 'allow'),
          'X-Content-Type-Options': 'nosniff',
          'Referrer-Policy': 'no-referrer',
          'Cache-Control': 'no-store',
        },
      };
    },
    getAttachment: async ({ params }) => {
      const id = caught(params);
      const { index, attachment: a } = viewed(id, await inbox.attachment(id, params.n!));
      return {
        raw: { body: new Uint8Array(a.content), contentType: mediaType(a.contentType) },
        headers: attachmentHeaders(a, index),
      };
    },
    getMessageChecks: async ({ params, query }) => ({ body: await core.checks.get(caught(params), query.refresh) }),
    deleteMessage: ({ params }) => inbox.remove(caught(params)),
    deleteMessages: () => inbox.clear(),
    markMessageRead: ({ params }) => ({ body: inbox.markRead(caught(params), true) }),
    markMessageUnread: ({ params }) => ({ body: inbox.markRead(caught(params), false) }),
    claimMessage: ({ params }) => ({ body: inbox.claim(caught(params)) }),

    getClock: () => ({ body: clock.state() }),
    moveClock: async ({ body }) => {
      clock.move(body);
      const ran = await runDue();
      return { body: { now: clock.announce().now, ran } };
    },

    publishDomain: ({ params, body }) => ({ body: domains.publish(params.id!, body) }),
    putDns: ({ body }) => ({ body: zone.put(body) }),
    deleteDns: ({ query }) => zone.delete(query.host, query.type),

    createWebhook: async ({ body }) => ({ status: 201, body: await webhooks.create(body) }),
    listWebhooks: ({ query }) => ({ body: webhooks.listing(query.workspace_id) }),
    deleteWebhook: async ({ params }) => {
      await webhooks.remove(params.id!);
    },
    rotateWebhookSecret: async ({ params }) => ({ body: await webhooks.rotateSecret(params.id!) }),
    enableWebhook: async ({ params }) => ({ body: await webhooks.enable(params.id!) }),
    redeliverEvent: async ({ params, body }) => ({
      status: 202,
      body: await webhooks.redeliver(params.id!, body.endpoint_id),
    }),

    getChaos: () => ({ body: chaos.list() }),
    setChaos: ({ body }) => ({ body: chaos.set(body.rules.map(ruleFromRequest), body.seed) }),
    clearChaos: () => chaos.clear(),
  };
}
