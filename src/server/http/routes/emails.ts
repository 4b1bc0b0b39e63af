import { IDEMPOTENCY_HEADER } from '../../../contract/emails.js';
import type { endpoints } from '../../../contract/endpoints.js';
import type { Core } from '../../core/index.js';
import { ServiceError } from '../../core/errors.js';
import type { SendRequest, SendResult } from '../../core/emails.js';
import type { SendInput } from '../../core/rules/send-rules.js';
import type { Reply, RequestContext, Handlers } from '../handlers.js';
import { RouteRefusal } from '../problem.js';

/** `origin` is the server's public origin: the base of a message's `Location`. */
export function emailRoutes(
  core: Core,
  origin: () => string,
): Pick<Handlers, 'sendEmail' | 'sendBatch' | 'getEmail' | 'cancelEmail'> {
  const { emails } = core;

  /**
   * A send's answer: 202 with the message's Location, or 207 for a batch. A replay (the result kept for its
   * Idempotency-Key) is answered exactly as the first request was, marked `Idempotent-Replay: true`.
   */
  function answer(sent: SendResult): Reply {
    const headers: Record<string, string> =
      sent.kind === 'accepted' ? { Location: `${origin()}/v1/emails/${sent.body.id}` } : {};
    if (sent.replayed) headers['Idempotent-Replay'] = 'true';
    return { status: sent.kind === 'accepted' ? 202 : 207, body: sent.body, headers };
  }

  /**
   * A request handed to core's one entry of a send (its rate limit, Idempotency-Key and rules are core's); every send
   * response carries the X-RateLimit headers of the token the request took, a refusal's too.
   */
  async function submitted(
    ctx: Pick<RequestContext<(typeof endpoints)['sendEmail' | 'sendBatch']>, 'caller' | 'headers'>,
    send: SendRequest['send'],
  ): Promise<Reply> {
    const key = ctx.caller.principal;
    const ticket = emails.take(key.workspaceId, 'http');
    const rate = {
      'X-RateLimit-Limit': String(ticket.rate.limit),
      'X-RateLimit-Remaining': String(ticket.rate.remaining),
      'X-RateLimit-Reset': String(ticket.rate.reset),
    };
    try {
      const idempotencyKey = ctx.headers.get(IDEMPOTENCY_HEADER) ?? undefined;
      const reply = answer(await emails.submit({ ticket, key, idempotencyKey, send }));
      return { ...reply, headers: { ...reply.headers, ...rate } };
    } catch (err) {
      // A refused send (400, 409, 422, 429, 451…) spent its token too, and says so.
      if (err instanceof ServiceError) throw new RouteRefusal(err, rate);
      throw err;
    }
  }

  return {
    // Checked against the schema as it was read; a long text or HTML comes as its UTF-8 bytes (http/json-body.ts),
    // which core takes as they are (SendInput).
    sendEmail: (ctx) => submitted(ctx, { checked: ctx.body as SendInput }),
    sendBatch: (ctx) => submitted(ctx, { batch: ctx.body, requestId: ctx.requestId }),
    getEmail: ({ caller, params }) => ({ body: emails.get(caller.workspace.id, params.id) }),
    cancelEmail: ({ caller, params }) => ({ body: emails.cancel(caller.workspace.id, params.id) }),
  };
}
