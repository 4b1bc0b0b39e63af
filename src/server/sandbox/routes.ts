// The sandbox routes (docs/local-server.md#sandbox-routes), each a call of core or of the chaos rules shaped as its
// answer: what the sandbox does is decided there, not here.
import type { Core } from '../core/index.js';
import type { SandboxHandlers } from '../http/handlers.js';
import { attachmentHeaders, mediaType, messageCsp, messageDocument } from './caught.js';
import type { Chaos } from './chaos.js';
import { ruleFromRequest } from './chaos-request.js';

export function sandboxRoutes(core: Core, runDue: () => Promise<number>, chaos: Chaos): SandboxHandlers {
  const { accounts, inbox, domains, zone, webhooks, clock } = core;

  return {
    createInvite: ({ body }) => ({ body: accounts.createInvite(body) }),
    createSandboxWorkspace: ({ body }) => ({ body: accounts.addWorkspace(body.email, body.name, body.role) }),
    suspendWorkspace: ({ params }) => ({ body: accounts.setWorkspaceStatus(params.id!, 'suspended') }),
    activateWorkspace: ({ params }) => ({ body: accounts.setWorkspaceStatus(params.id!, 'active') }),
    closeWorkspace: ({ params }) => ({ body: accounts.setWorkspaceStatus(params.id!, 'closed') }),

    listMessages: ({ query }) => ({ body: inbox.list(query) }),
    getMessage: async ({ params }) => ({ body: await inbox.get(params.id!) }),
    getRawMessage: ({ params }) => ({
      raw: { body: new Uint8Array(inbox.raw(params.id!)), contentType: 'message/rfc822' },
      headers: { 'X-Content-Type-Options': 'nosniff', 'Content-Security-Policy': "default-src 'none'; sandbox" },
    }),
    getMessageHtml: async ({ params, query }) => ({
      raw: {
        body: messageDocument(await inbox.html(params.id!), query.appearance),
        contentType: 'text/html; charset=utf-8',
      },
      headers: {
        'Content-Security-Policy': messageCsp(query.remote_images === 'allow'),
        'X-Content-Type-Options': 'nosniff',
        'Referrer-Policy': 'no-referrer',
        'Cache-Control': 'no-store',
      },
    }),
    getAttachment: async ({ params }) => {
      const { index, attachment: a } = await inbox.attachment(params.id!, params.n!);
      return {
        raw: { body: new Uint8Array(a.content), contentType: mediaType(a.contentType) },
        headers: attachmentHeaders(a, index),
      };
    },
    getMessageChecks: async ({ params, query }) => ({ body: await core.checks.get(params.id!, query.refresh) }),
    deleteMessage: ({ params }) => inbox.remove(params.id!),
    deleteMessages: () => inbox.clear(),
    markMessageRead: ({ params }) => ({ body: inbox.markRead(params.id!, true) }),
    markMessageUnread: ({ params }) => ({ body: inbox.markRead(params.id!, false) }),
    claimMessage: ({ params }) => ({ body: inbox.claim(params.id!) }),

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
