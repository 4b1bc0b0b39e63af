import { IDEMPOTENCY_HEADER } from '../../../contract/emails.js';
import type { KeyPrincipal } from '../../core/keys.js';
import type { endpoints } from '../../../contract/endpoints.js';
import type { Core } from '../../core/index.js';
import { ServiceError } from '../../core/errors.js';
import type { SendResult } from '../../core/emails.js';
import type { Reply, RequestContext, V1Handlers } from '../handlers.js';
import { RouteRefusal } from '../problem.js';

function idempotencyKey(headers: Headers): string | undefined {
  const key = headers.get(IDEMPOTENCY_HEADER);
  if (key === null) return undefined;
  if (key.length === 0 || key.length > 255) {
    throw new ServiceError('invalid_request', 'The Idempotency-Key header must be 1–255 characters.', {
      errors: [{ path: 'Idempotency-Key', code: 'invalid', message: 'must be 1–255 characters' }],
    });
  }
  return key;
}

/** `origin` is the server's public origin: the base of a message's `Location`. */
export function emailRoutes(
  core: Core,
  origin: () => string,
): Pick<V1Handlers, 'sendEmail' | 'sendBatch' | 'getEmail' | 'cancelEmail'> {
  const { emails, sendRate } = core;

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

  /** Takes a token from the workspace's bucket; every send response carries the X-RateLimit headers. */
  async function limited(
    ctx: Pick<RequestContext<(typeof endpoints)['sendEmail' | 'sendBatch']>, 'caller' | 'headers'>,
    run: (key: KeyPrincipal, idem: string | undefined) => Promise<SendResult>,
  ): Promise<Reply> {
    const key = ctx.caller.principal;
    const state = sendRate.take(key.workspaceId);
    const rate = {
      'X-RateLimit-Limit': String(state.limit),
      'X-RateLimit-Remaining': String(state.remaining),
      'X-RateLimit-Reset': String(state.reset),
    };
    if (!state.allowed) {
      throw new RouteRefusal(
        new ServiceError(
          'rate_limited',
          `This workspace may send ${state.rate} requests a second, ${state.limit} at once; retry in ${state.retryAfter} s.`,
          { retryAfterSeconds: state.retryAfter },
        ),
        rate,
      );
    }
    try {
      const reply = answer(await run(key, idempotencyKey(ctx.headers)));
      return { ...reply, headers: { ...reply.headers, ...rate } };
    } catch (err) {
      // A refused send (400, 409, 422, 451…) spent its token too, and says so.
      if (err instanceof ServiceError) throw new RouteRefusal(err, rate);
      throw err;
    }
  }

  return {
    // A long text or HTML comes as its UTF-8 bytes (http/json-body.ts), which core takes as they are (SendInput).
    sendEmail: (ctx) => limited(ctx, (key, idem) => emails.send(key, ctx.body, idem)),
    sendBatch: (ctx) => limited(ctx, (key, idem) => emails.batch(key, ctx.body, idem, ctx.requestId)),
    getEmail: ({ caller, params }) => ({ body: emails.get(caller.workspace.id, params.id) }),
    cancelEmail: ({ caller, params }) => ({ body: emails.cancel(caller.workspace.id, params.id) }),
  };
}
