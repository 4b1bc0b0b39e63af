import type { z } from 'zod';
import { endpoints } from '../../contract/endpoints.js';
import type { ChaosRule as ChaosRuleSchema } from '../../contract/sandbox.js';
import type { FieldError } from '../../contract/common.js';
import { iso, type Clock, type ManualClock } from '../../lib/clock.js';
import type { Core } from '../core/index.js';
import { ServiceError, fail } from '../core/errors.js';
import type { SandboxHandlers } from '../http/app.js';
import { attachmentHeaders, mediaType, messageCsp, messageDocument } from './caught.js';
import { unmatchable, type Chaos, type ChaosAction, type ChaosMatch, type ChaosRule } from './chaos.js';

/** The `/v1` routes served, for telling a chaos rule that can never match. */
const V1_ROUTES = Object.values(endpoints).map((e) => ({ method: e.method, path: `/v1${e.path}` }));

export function sandboxRoutes(core: Core, clock: Clock, runDue: () => Promise<number>, chaos: Chaos): SandboxHandlers {
  const { accounts, inbox, domains, zone, webhooks } = core;
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

    listMessages: ({ query }) => ({ body: inbox.list(query) }),
    getMessage: async ({ params }) => ({ body: await inbox.get(params.id!) }),
    getRawMessage: ({ params }) => ({
      raw: { body: new Uint8Array(inbox.raw(params.id!)), contentType: 'message/rfc822' },
      headers: { 'X-Content-Type-Options': 'nosniff', 'Content-Security-Policy': "default-src 'none'; sandbox" },
    }),
    getMessageHtml: async ({ params, query }) => ({
      raw: { body: messageDocument(await inbox.html(params.id!)), contentType: 'text/html; charset=utf-8' },
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
    deleteMessage: ({ params }) => inbox.remove(params.id!),
    deleteMessages: () => inbox.clear(),
    markMessageRead: ({ params }) => ({ body: inbox.markRead(params.id!, true) }),
    markMessageUnread: ({ params }) => ({ body: inbox.markRead(params.id!, false) }),

    getClock: () => ({ body: { now: iso(clock.now()), mode: clock.mode } }),
    moveClock: async ({ body }) => {
      const c = manual();
      if (body.to !== undefined) {
        const target = Date.parse(body.to);
        if (target < c.now()) {
          throw new ServiceError(
            'validation_failed',
            'to: the clock only moves forward; give a time after the current service time.',
            {
              errors: [{ path: 'to', code: 'in_past', message: 'earlier than the current service time' }],
            },
          );
        }
        c.set(target);
      } else {
        c.advance(Math.round(body.advance_seconds! * 1000));
      }
      const ran = await runDue();
      inbox.publish({ event: 'clock', data: { now: iso(c.now()), mode: c.mode } });
      return { body: { now: iso(c.now()), ran } };
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
    setChaos: ({ body }) => ({ body: chaos.set(body.rules.map(checkedRule), body.seed) }),
    clearChaos: () => chaos.clear(),
  };
}

/**
 * A rule as validated (contract/sandbox.ts: ranges, one action that fits the match) in the engine's shape, once its
 * HTTP match is known to fit a route: a rule that could never match is refused rather than kept doing nothing.
 */
function checkedRule(rule: z.output<typeof ChaosRuleSchema>, i: number): ChaosRule {
  const { match: m, action: a } = rule;
  let match: ChaosMatch;
  if (m.smtp !== undefined) {
    match = { smtp: m.smtp };
  } else {
    const never = unmatchable(m, V1_ROUTES);
    if (never) {
      const error: FieldError = { path: `rules.${i}.match.${never.field}`, code: 'no_route', message: never.message };
      throw new ServiceError('validation_failed', `${error.path}: ${error.message}`, { errors: [error] });
    }
    match = {
      ...(m.method !== undefined ? { method: m.method } : {}),
      ...(m.path !== undefined ? { path: m.path } : {}),
    };
  }
  const action: ChaosAction =
    a.code !== undefined
      ? { code: a.code, ...(a.message !== undefined ? { message: a.message } : {}) }
      : a.status !== undefined
        ? { status: a.status, ...(a.retry_after !== undefined ? { retry_after: a.retry_after } : {}) }
        : a.delay_ms !== undefined
          ? { delay_ms: a.delay_ms }
          : { reset: true };
  return {
    match,
    action,
    ...(rule.times !== undefined ? { times: rule.times } : {}),
    ...(rule.probability !== undefined ? { probability: rule.probability } : {}),
  };
}
