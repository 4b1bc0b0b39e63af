import type { CaughtMessage, CaughtMessageEvent } from '../../contract/sandbox.js';
import { iso, type Clock, type ManualClock } from '../../lib/clock.js';
import type { Core } from '../core/index.js';
import { ServiceError, fail, unknownCursor } from '../core/errors.js';
import type { CaughtReader } from '../smtp/sink.js';
import type { SandboxHandlers } from '../http/app.js';
import { attachmentHeaders, deliveriesByEvent, dkimDomain, mediaType, messageCsp, messageDocument, parseFull, summaryOf } from './caught.js';
import { parseSearch } from './search.js';
import type { InboxStream } from './stream.js';

const NO_CAUGHT_MESSAGE = 'No caught message has this id; `svc inbox` lists them.';
const noMessage = () => fail('not_found', NO_CAUGHT_MESSAGE);


export function sandboxRoutes(
  core: Core,
  clock: Clock,
  runDue: () => Promise<number>,
  caught: CaughtReader,
  stream: Pick<InboxStream, 'publish'>,
): SandboxHandlers {
  const { accounts, accountStore, sink, domains, domainStore, eventStore, webhooks } = core;
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
        search: query.q ? (parseSearch(query.q) ?? undefined) : undefined,
      }) ?? unknownCursor();
      return { body: { data: rows.slice(0, limit).map(summaryOf), has_more: rows.length > limit } };
    },
    getMessage: async ({ params }) => {
      const r = sink.get(params.id!) ?? noMessage();
      const headers: CaughtMessage['headers'] = JSON.parse(r.headers);
      let events: CaughtMessageEvent[] | null = null;
      if (r.svc_message_id) {
        const rows = eventStore.ofMessage(r.svc_message_id);
        const urls = new Map(r.workspace_id ? webhooks.list(r.workspace_id).map((e) => [e.id, e.url]) : []);
        const deliveries = deliveriesByEvent(webhooks.attemptsOfEvents(rows.map((e) => e.id)), urls);
        events = rows.map((e) => {
          // The same timeline entries as GET /v1/emails/{id}, with the event ids and their webhook deliveries.
          const { message_id: _m, from: _f, subject: _s, tags: _t, ...detail } = JSON.parse(e.data);
          return { id: e.id, type: e.type, occurred_at: iso(e.created_at), detail, deliveries: deliveries.get(e.id) ?? [] };
        });
      }
      const body: CaughtMessage = {
        ...summaryOf(sink.summary(r.id)!),
        envelope: { mail_from: r.mail_from, rcpt_to: JSON.parse(r.rcpt_to) },
        headers,
        ...(await caught.body(r)),
        dkim: await caught.dkim(r),
        dkim_domain: dkimDomain(headers),
        events,
      };
      return { body };
    },
    getRawMessage: ({ params }) => {
      const r = sink.get(params.id!) ?? noMessage();
      return {
        raw: { body: new Uint8Array(r.raw), contentType: 'message/rfc822' },
        headers: { 'X-Content-Type-Options': 'nosniff', 'Content-Security-Policy': "default-src 'none'; sandbox" },
      };
    },
    getMessageHtml: async ({ params, query }) => {
      const r = sink.get(params.id!) ?? noMessage();
      const { html } = await parseFull(r.raw);
      if (typeof html !== 'string') fail('not_found', 'This message has no HTML part.');
      return {
        raw: { body: messageDocument(html as string), contentType: 'text/html; charset=utf-8' },
        headers: {
          'Content-Security-Policy': messageCsp(query.remote_images === 'allow'),
          'X-Content-Type-Options': 'nosniff',
          'Referrer-Policy': 'no-referrer',
          'Cache-Control': 'no-store',
        },
      };
    },
    getAttachment: async ({ params }) => {
      const r = sink.get(params.id!) ?? noMessage();
      const n = /^\d{1,4}$/.test(params.n!) ? Number(params.n) : -1;
      const a = (await parseFull(r.raw)).attachments[n] ?? fail('not_found', `This message has no attachment ${params.n}; they are numbered from 0.`);
      return { raw: { body: new Uint8Array(a.content), contentType: mediaType(a.contentType) }, headers: attachmentHeaders(a, n) };
    },
    deleteMessage: ({ params }) => {
      if (!sink.remove(params.id!)) noMessage();
      stream.publish({ event: 'deleted', data: { ids: [params.id!] } });
    },
    deleteMessages: () => {
      sink.clear();
      stream.publish({ event: 'deleted', data: { all: true } });
    },
    markMessageRead: ({ params }) => {
      if (!sink.setRead(params.id!, clock.now())) noMessage();
      stream.publish({ event: 'read', data: { id: params.id!, read: true } });
      return { body: summaryOf(sink.summary(params.id!)!) };
    },
    markMessageUnread: ({ params }) => {
      if (!sink.setRead(params.id!, null)) noMessage();
      stream.publish({ event: 'read', data: { id: params.id!, read: false } });
      return { body: summaryOf(sink.summary(params.id!)!) };
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
      stream.publish({ event: 'clock', data: { now: iso(c.now()), mode: c.mode } });
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
    listWebhooks: ({ query }) => {
      const data = webhooks.list(query.workspace_id);
      const workspaces = [...new Set(data.map((e) => e.workspace_id))].map((id) => ({ id, name: accountStore.workspaceById(id)?.name ?? id }));
      return { body: { data, workspaces } };
    },
    deleteWebhook: async ({ params }) => {
      await webhooks.remove(params.id!);
    },
    rotateWebhookSecret: async ({ params }) => ({ body: await webhooks.rotateSecret(params.id!) }),
    enableWebhook: async ({ params }) => ({ body: await webhooks.enable(params.id!) }),
    redeliverEvent: async ({ params, body }) => ({ status: 202, body: await webhooks.redeliver(params.id!, body.endpoint_id) }),
  };
}
