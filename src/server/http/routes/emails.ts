import { IDEMPOTENCY_HEADER, SendEmailRequest } from '../../../contract/emails.js';
import type { KeyPrincipal } from '../../core/keys.js';
import type { Core } from '../../core/index.js';
import { ServiceError } from '../../core/errors.js';
import type { SendOutcome, Sent, StoredAnswer } from '../../core/emails.js';
import type { RequestContext, Reply, V1Handlers } from '../app.js';
import { problemBody } from '../problem.js';
import { validate } from '../validate.js';

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

/** `origin` is the server's public origin: the base of `Location` and of the Problems of a batch's refused items. */
export function emailRoutes(
  core: Core,
  origin: () => string,
): Pick<V1Handlers, 'sendEmail' | 'sendBatch' | 'getEmail' | 'cancelEmail'> {
  const { emails, sendRate } = core;

  /** The answer to a fresh send: 202 with the message's Location, or 207 for a batch. */
  const answer = (sent: Sent): StoredAnswer =>
    sent.kind === 'accepted'
      ? { status: 202, headers: { Location: `${origin()}/v1/emails/${sent.id}` } }
      : { status: 207, headers: {} };

  /** Takes a token from the workspace's bucket; every send response carries the X-RateLimit headers. */
  async function limited(
    ctx: RequestContext<unknown>,
    run: (key: KeyPrincipal, idem: string | undefined) => Promise<SendOutcome>,
  ): Promise<Reply> {
    const key = ctx.caller.principal as KeyPrincipal;
    const state = sendRate.take(key.workspaceId);
    const rate = {
      'X-RateLimit-Limit': String(state.limit),
      'X-RateLimit-Remaining': String(state.remaining),
      'X-RateLimit-Reset': String(state.reset),
    };
    if (!state.allowed) {
      throw new ServiceError(
        'rate_limited',
        `This workspace may send ${state.limit} requests a second; retry in ${state.retryAfter} s.`,
        {
          headers: { ...rate, 'Retry-After': String(state.retryAfter) },
        },
      );
    }
    try {
      const result = await run(key, idempotencyKey(ctx.headers));
      // A replay answers what was stored for the first answer, marked as a replay.
      const { status, headers } = result.replayed
        ? { ...result.stored, headers: { ...result.stored.headers, 'Idempotent-Replay': 'true' } }
        : answer(result);
      return { status, body: result.body, headers: { ...headers, ...rate } };
    } catch (err) {
      // A refused send (400, 409, 422, 451…) spent its token too, and says so.
      if (err instanceof ServiceError)
        throw new ServiceError(err.code, err.detail, { ...err.extra, headers: { ...err.extra.headers, ...rate } });
      throw err;
    }
  }

  return {
    sendEmail: (ctx) =>
      limited(ctx as RequestContext<unknown>, (key, idem) => emails.send(key, ctx.body, idem, answer)),
    sendBatch: (ctx) =>
      limited(ctx as RequestContext<unknown>, (key, idem) =>
        emails.batch(
          key,
          ctx.body,
          idem,
          (item) => validate(SendEmailRequest, item, 'body'),
          (err) => problemBody(err, ctx.requestId, origin()) as unknown as Record<string, unknown>,
          answer,
        ),
      ),
    getEmail: ({ caller, params }) => ({ body: emails.get(caller.workspace!.id, params.id!) }),
    cancelEmail: ({ caller, params }) => ({ body: emails.cancel(caller.workspace!.id, params.id!) }),
  };
}
