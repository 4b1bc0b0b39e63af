// Webhook endpoints, managed through a local server (docs/local-server.md#sandbox-routes; `/v1/webhooks` is not
// served), and an event's redelivery: calls of core's webhooks.
import type { Core } from '../../core/index.js';
import type { Handlers } from '../handlers.js';

export function webhookEndpointRoutes(
  core: Core,
): Pick<
  Handlers,
  'createWebhook' | 'listWebhooks' | 'deleteWebhook' | 'rotateWebhookSecret' | 'enableWebhook' | 'redeliverEvent'
> {
  const { webhooks } = core;
  return {
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
  };
}
