import type { CaughtMessage, CaughtMessageSummary } from '../../contract/sandbox.js';
import { iso, type Clock, type ManualClock } from '../../lib/clock.js';
import type { Core } from '../core/index.js';
import { ServiceError, fail, unknownCursor } from '../core/errors.js';
import type { SinkSummaryRow } from '../store/sink.js';
import type { CaughtReader } from '../smtp/sink.js';
import type { SandboxHandlers } from '../http/app.js';

function summary(r: SinkSummaryRow): CaughtMessageSummary {
  return {
    id: r.id,
    message_id: r.svc_message_id,
    from: r.from_addr,
    to: JSON.parse(r.to_addrs),
    cc: JSON.parse(r.cc_addrs),
    subject: r.subject,
    received_at: iso(r.received_at),
    size: r.size,
  };
}

const NO_CAUGHT_MESSAGE = 'No caught message has this id; `svc inbox` lists them.';

export function sandboxRoutes(
  core: Core,
  clock: Clock,
  runDue: () => Promise<number>,
  caught: CaughtReader,
): SandboxHandlers {
  const { accounts, sink, domains, domainStore, webhooks } = core;
  const manual = () =>
    clock.mode === 'manual'
      ? (clock as ManualClock)
      : fail('conflict', 'The clock is real; restart the server with `svc serve --clock manual` to move it.');

  return {
    createInvite: ({ body }) => ({ body: accounts.createInvite(body) }),
    createSandboxWorkspace: ({ body }) => ({ body: accounts.addWorkspace(body.email, body.name, body.role) }),
    suspendWorkspace: ({ params }) => ({ body: accounts.setWorkspaceStatus(params.id!, 'suspended') }),
    activateWorkspace: ({ params }) => ({ body: accounts.setWorkspaceStatus(params.id!, 'active') }),
    closeWorkspace: ({ params }) => ({ body: accounts.setWorkspaceStatus(params.id!, 'closed') }),

    listMessages: ({ query }) => {
      const limit = query.limit ?? 20;
      const rows = sink.list({
        to: query.to, workspaceId: query.workspace_id, since: query.since ? Date.parse(query.since) : undefined, limit, after: query.after,
      }) ?? unknownCursor();
      return { body: { data: rows.slice(0, limit).map(summary), has_more: rows.length > limit } };
    },
    getMessage: async ({ params }) => {
      const r = sink.get(params.id!) ?? fail('not_found', NO_CAUGHT_MESSAGE);
      const body: CaughtMessage = {
        ...summary(r),
        envelope: { mail_from: r.mail_from, rcpt_to: JSON.parse(r.rcpt_to) },
        headers: JSON.parse(r.headers),
        ...(await caught.body(r)),
        dkim: await caught.dkim(r),
      };
      return { body };
    },
    getRawMessage: ({ params }) => {
      const r = sink.get(params.id!) ?? fail('not_found', NO_CAUGHT_MESSAGE);
      return { raw: { body: new Uint8Array(r.raw), contentType: 'message/rfc822' } };
    },
    deleteMessages: () => {
      sink.clear();
    },

    getClock: () => ({ body: { now: iso(clock.now()), mode: clock.mode } }),
    moveClock: async ({ body }) => {
      const c = manual();
      if (body.to !== undefined) {
        const target = Date.parse(body.to);
        if (target < c.now()) {
          throw new ServiceError('validation_failed', 'to: the clock only moves forward; give a time after the current service time.', {
            errors: [{ path: 'to', code: 'in_past', message: 'earlier than the current service time' }],
          });
        }
        c.set(target);
      } else {
        c.advance(Math.round(body.advance_seconds! * 1000));
      }
      const ran = await runDue();
      return { body: { now: iso(c.now()), ran } };
    },

    publishDomain: ({ params, body }) => ({ body: domains.publish(params.id!, body) }),
    putDns: ({ body }) => {
      const host = body.host.toLowerCase().replace(/\.$/, '');
      const state = body.state ?? 'visible';
      domainStore.zonePut(host, body.type, body.values, state);
      return { body: { host, type: body.type, values: body.values, state } };
    },
    deleteDns: ({ query }) => {
      domainStore.zoneDelete(query.host.toLowerCase(), query.type);
    },

    createWebhook: async ({ body }) => ({ status: 201, body: await webhooks.create(body) }),
    listWebhooks: ({ query }) => ({ body: { data: webhooks.list(query.workspace_id) } }),
    deleteWebhook: async ({ params }) => {
      await webhooks.remove(params.id!);
    },
    rotateWebhookSecret: async ({ params }) => ({ body: await webhooks.rotateSecret(params.id!) }),
    enableWebhook: async ({ params }) => ({ body: await webhooks.enable(params.id!) }),
    redeliverEvent: async ({ params, body }) => ({ status: 202, body: await webhooks.redeliver(params.id!, body.endpoint_id) }),
  };
}
