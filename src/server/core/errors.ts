import type { ErrorCode, FieldError } from '../../contract/common.js';
import { DISK_FULL_WAIT_MS } from './rules/retry-policy.js';

/**
 * A refusal by a rule of the service. `http/` maps its code to a status; the message becomes the Problem `detail`. It
 * says what happened and when to try again, never how an answer is written: the HTTP layer makes `retryAfterSeconds`
 * a `Retry-After` header, SMTP submission a reply code.
 */
export class ServiceError extends Error {
  constructor(
    readonly code: ErrorCode,
    detail?: string,
    readonly extra: {
      errors?: FieldError[];
      /** How long the caller should wait before trying again (a full window, a full disk, a busy server). */
      retryAfterSeconds?: number;
      members?: Record<string, unknown>;
      /** Another status than the code's own (a chaos rule's answer); the title is then the status's reason phrase. */
      status?: number;
    } = {},
  ) {
    super(detail ?? code);
    this.name = 'ServiceError';
  }
  get detail(): string | undefined {
    return this.message === this.code ? undefined : this.message;
  }
}

export const fail = (code: ErrorCode, detail?: string, extra?: ServiceError['extra']): never => {
  throw new ServiceError(code, detail, extra);
};

/** `after` named no item of the list (deleted, another tenant's, or never one): 400, rather than a silent empty page. */
export function unknownCursor(): never {
  throw new ServiceError(
    'invalid_request',
    'No item of this list has the id given in `after`; list again without it.',
    {
      errors: [{ path: 'after', code: 'not_found', message: 'no item of this list has this id' }],
    },
  );
}

/** A 422 `validation_failed` naming one field. */
export function invalidField(path: string, message: string, code: ErrorCode = 'validation_failed'): ServiceError {
  return new ServiceError(code, `${path}: ${message}`, { errors: [{ path, code: 'invalid', message }] });
}

/**
 * 507 `insufficient_storage`: a write found no room (`full` says where: "the disk holding the data directory … is
 * full"). Nothing of the request was kept, so sending it again later is safe.
 */
export function storageFull(full: string): ServiceError {
  return new ServiceError(
    'insufficient_storage',
    `Nothing was written: ${full}. Free space there; writes are accepted again by themselves, and reads still work.`,
    { retryAfterSeconds: DISK_FULL_WAIT_MS / 1000 },
  );
}
