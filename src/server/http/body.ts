// Reading request bodies without letting any client hold the server's memory: a limit per operation (checked against
// the declared length before authentication, and again while reading), one budget of bytes buffered across all
// requests, and a body that stops arriving is given up after a while.
import type { IncomingMessage } from 'node:http';
import { gather } from '../../lib/gather.js';
import { ServiceError } from '../core/errors.js';

export interface BodyLimits {
  /** Bytes buffered across every request being read at once (429 past it). */
  totalBytes: number;
  /** How long a body may go without a byte before it is given up (400). */
  idleMs: number;
  /** How long a whole body may take to arrive, however steadily it trickles (408). */
  deadlineMs?: number;
}

export const DEFAULT_BODY_LIMITS: BodyLimits = { totalBytes: 48 * 1024 * 1024, idleMs: 15_000, deadlineMs: 60_000 };

/** The client closed the connection before its request arrived: there is no one left to answer. */
export class ClientGone extends Error {
  constructor() {
    super('the client went away before its request arrived');
    this.name = 'ClientGone';
  }
}
/** A declared body this long (more than one socket read) is gathered in one Buffer as it arrives. */
const GATHER_WHOLE = 64 * 1024;

function sizeOf(limit: number): string {
  return limit >= 1024 * 1024 ? `${limit / (1024 * 1024)} MiB` : `${limit / 1024} KiB`;
}

export function tooLarge(limit: number): ServiceError {
  return new ServiceError(
    'payload_too_large',
    `The request body is larger than this operation takes (${sizeOf(limit)}).`,
  );
}

/** The server-wide count of body bytes held in memory. */
export interface BodyBudget {
  /** Takes `n` bytes; false when the budget has no room (nothing taken). */
  take(n: number): boolean;
  give(n: number): void;
  readonly held: number;
}

export function createBodyBudget(total: number): BodyBudget {
  let held = 0;
  return {
    take(n) {
      if (held + n > total) return false;
      held += n;
      return true;
    },
    give(n) {
      held -= n;
    },
    get held() {
      return held;
    },
  };
}

const busy = () =>
  new ServiceError('rate_limited', 'The server is reading too many request bodies at once; try again in a moment.', {
    retryAfterSeconds: 1,
  });

/**
 * Reads a request body of at most `limit` bytes from the socket, counting it against the budget while it is held;
 * `release` (call it once the request is answered) gives the bytes back. A declared Content-Length is taken from the
 * budget before the first byte is read (refused with nothing read when there is no room); a chunked body is counted as
 * it arrives. Rejects with 413 past the limit, 429 when the server holds too much already, 400 when the body stops
 * arriving for `idleMs`, 408 when the whole of it has not arrived after `deadlineMs`.
 */
export function readIncoming(
  incoming: IncomingMessage,
  limit: number,
  budget: BodyBudget,
  idleMs: number,
  deadlineMs = DEFAULT_BODY_LIMITS.deadlineMs!,
): { body: Promise<Buffer>; release: () => void } {
  const declared = incoming.headers['content-length'] === undefined ? null : Number(incoming.headers['content-length']);
  if (declared !== null && !budget.take(declared)) return { body: Promise.reject(busy()), release: () => {} };
  let taken = declared ?? 0;
  let read = 0;
  const body = new Promise<Buffer>((resolve, reject) => {
    // A declared length that spans several socket reads is gathered in one Buffer of that size (what the budget took).
    // Otherwise a socket read may fill only part of the block node allocated for it: keep just the bytes, so what the
    // budget counts is what memory holds.
    const chunks = gather(declared !== null && declared >= GATHER_WHOLE ? declared : 0, (chunk) =>
      chunk.byteLength * 2 < chunk.buffer.byteLength ? Buffer.from(chunk) : chunk,
    );
    let timer: NodeJS.Timeout | undefined;
    // A body that trickles in (a byte every few seconds) never stalls long enough for the idle limit: it is answered
    // 408 at this deadline while the client is still there, rather than dropped by node's own request timeout.
    const deadline = setTimeout(
      () =>
        finish(
          new ServiceError(
            'request_timeout',
            `The request body did not arrive within ${deadlineMs / 1000} s; send it again in one go.`,
          ),
        ),
      deadlineMs,
    );
    const finish = (err: Error | null) => {
      clearTimeout(timer);
      clearTimeout(deadline);
      incoming.off('data', onData).off('end', onEnd).off('error', onError).off('aborted', onAborted);
      if (!err) return resolve(chunks.bytes());
      incoming.pause();
      reject(err);
    };
    const arm = () => {
      clearTimeout(timer);
      timer = setTimeout(
        () =>
          finish(
            new ServiceError(
              'invalid_request',
              `The request body stopped arriving (nothing for ${idleMs / 1000} s); send it again in one go.`,
            ),
          ),
        idleMs,
      );
    };
    const onData = (chunk: Buffer) => {
      read += chunk.length;
      if (read > limit) return finish(tooLarge(limit));
      if (declared === null) {
        if (!budget.take(chunk.length)) return finish(busy());
        taken += chunk.length;
      }
      chunks.add(chunk);
      arm();
    };
    const onEnd = () => finish(null);
    const onError = (err: Error) => finish(err);
    const onAborted = () => finish(new ClientGone());
    incoming.on('data', onData).on('end', onEnd).on('error', onError).on('aborted', onAborted);
    arm();
  });
  return {
    body,
    release: () => {
      budget.give(taken);
      taken = 0;
    },
  };
}
