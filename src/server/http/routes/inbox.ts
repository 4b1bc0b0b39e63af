// The caught mail of a local server (docs/local-server.md#sandbox-routes): listed, viewed, marked, claimed and deleted
// through core's inbox; the views a browser opens are shaped by http/caught.ts.
import { BIG_MESSAGE_BYTES } from '../../core/rules/big-message.js';
import type { Core } from '../../core/index.js';
import { attachmentHeaders, mediaType, messageCsp, messageDocument } from '../caught.js';
import type { Handlers } from '../handlers.js';
import { fail } from '../../core/errors.js';

type InboxRoute =
  | 'listMessages'
  | 'listOutbox'
  | 'getMessage'
  | 'getRawMessage'
  | 'getMessageHtml'
  | 'getAttachment'
  | 'getMessageChecks'
  | 'deleteMessage'
  | 'deleteMessages'
  | 'markMessageRead'
  | 'markMessageUnread'
  | 'claimMessage'
  | 'waitForMessage'
  | 'getRelay'
  | 'releaseMessage';

/**
 * A `to` filter as a query string carries it: a plus-address's `+` left unencoded (`?to=ada+t1@example.org`, as a
 * hand-written curl sends it) is read as a space, which no unquoted address holds; it is taken back as the `+`.
 */
const plusAddress = (to: string | undefined) => (to === undefined || to.includes('"') ? to : to.replace(/ /g, '+'));

/**
 * `collect` starts a full garbage collection (`svc serve` exposes V8's): run after a view of a big message, whose
 * source was read and split to show it, so that an inbox left open does not keep that garbage resident.
 */
export function inboxRoutes(core: Core, collect?: () => void): Pick<Handlers, InboxRoute> {
  const { inbox } = core;
  const viewed = <T>(id: string, view: T, size?: number): T => {
    if (collect && (size ?? inbox.size(id)) >= BIG_MESSAGE_BYTES) setImmediate(collect);
    return view;
  };
  /** The caught message a path names: by its own `eml_…` id, or by the `msg_…` id of the `/v1` message it is. */
  const caught = (params: { id?: string }) => inbox.caughtId(params.id!);

  return {
    listMessages: ({ query }) => ({ body: inbox.list({ ...query, to: plusAddress(query.to) }) }),
    listOutbox: ({ query }) => ({ body: inbox.outbox({ ...query, to: plusAddress(query.to) }) }),
    getMessage: async ({ params }) => {
      const id = caught(params);
      const m = await inbox.get(id);
      return { body: viewed(id, m, m.size) };
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
    claimMessage: async ({ params }) => {
      const id = caught(params);
      const claimed = await inbox.claim(id);
      return { body: viewed(id, claimed, claimed.message.size) };
    },
    waitForMessage: async ({ body, signal }) => {
      const { message, stopping } = await inbox.wait(body, signal);
      if (stopping)
        fail('unavailable', 'The server is shutting down, so the wait ends; start it again with `svc serve`.');
      return { body: { message: message && viewed(message.id, message, message.size) } };
    },
    getRelay: () => ({ body: core.relay.info() }),
    releaseMessage: async ({ params, body }) => ({ body: await core.relay.release(caught(params), body.to) }),
  };
}
