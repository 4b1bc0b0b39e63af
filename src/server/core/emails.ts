import type { Problem } from '../../contract/common.js';
import { type Message, type MessageAccepted, SendEmailRequest, type Tag } from '../../contract/emails.js';
import { iso } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import type { AccountStore } from '../store/accounts.js';
import type { DomainStore } from '../store/domains.js';
import type { MessageContent, MessageRow, EmailStore } from '../store/emails.js';
import { Base64Of } from './rules/canonical.js';
import type { Deps } from './deps.js';
import { ServiceError, fail } from './errors.js';
import type { Events } from './events.js';
import { createIdempotency } from './idempotency.js';
import type { MessageEvents } from './message-events.js';
import type { KeyPrincipal } from './keys.js';
import { problemBody } from './problem.js';
import type { BucketState, SendRate } from './send-rate.js';
import {
  abuseFilter,
  attachmentPieces,
  type CheckedAttachment,
  checkFields,
  checkedInput,
  type SendInput,
} from './rules/send-rules.js';
import { validate } from './rules/validate.js';

export type { StoredAttachment } from './rules/send-rules.js';

/** One item of a batch's result: accepted (its id and status) or refused (the Problem of its refusal). */
export type BatchItem =
  | { status: 202; id: string; message_status: MessageAccepted['status'] }
  | { status: number; error: Problem };

/**
 * What a send came to: one message accepted, or a batch's result (each item accepted or refused, in request order).
 * `replayed` when it is the result kept for its Idempotency-Key from the first request.
 */
export type SendResult =
  | { kind: 'accepted'; body: MessageAccepted; replayed: boolean }
  | { kind: 'batch'; body: { data: BatchItem[] }; replayed: boolean };
type Accepted = Extract<SendResult, { kind: 'accepted' }>;

/** Where a send comes in: the API (`POST /v1/emails`, `/v1/emails/batch`) or SMTP submission. */
export type SendSource = 'http' | 'smtp';

/**
 * A token taken from the workspace's sending bucket for one send (core/send-rate.ts): `rate` is the bucket after it
 * (the API's X-RateLimit-* headers), `refusal` the `rate_limited` error when there was none to take. The API takes it
 * as a request comes, SMTP submission at MAIL FROM, before the client sends its message; a send refused later spent
 * its token all the same.
 */
export interface SendTicket {
  rate: BucketState;
  refusal: ServiceError | null;
}

/** A send from a key, as both the API and SMTP submission hand it to core (`emails.submit`). */
export interface SendRequest {
  ticket: SendTicket;
  key: KeyPrincipal;
  /** As the request or the message gave it (its Idempotency-Key header); 1–255 characters. */
  idempotencyKey: string | undefined;
  /**
   * One message: not yet checked against the contract's schema (`email`, SendInput's bytes allowed: SMTP
   * submission's), or checked as it was read (`checked`: the API's body, http/json-body.ts), or a batch's items.
   */
  send: { email: unknown } | { checked: SendInput } | { batch: unknown[]; requestId: string };
}

/** An Idempotency-Key of 1–255 characters, or none; anything else is 400. */
function checkedKey(key: string | undefined): string | undefined {
  if (key !== undefined && (key.length === 0 || key.length > 255)) {
    throw new ServiceError('invalid_request', 'The Idempotency-Key header must be 1–255 characters.', {
      errors: [{ path: 'Idempotency-Key', code: 'invalid', message: 'must be 1–255 characters' }],
    });
  }
  return key;
}

/** The rate refusal as each source words it: the API's bucket in requests, SMTP submission's in messages. */
function rateRefusal(source: SendSource, state: BucketState): ServiceError {
  const detail =
    source === 'http'
      ? `This workspace may send ${state.rate} requests a second, ${state.limit} at once; retry in ${state.retryAfter} s.`
      : `This workspace may send ${state.rate} messages a second; retry in ${state.retryAfter} s.`;
  return new ServiceError('rate_limited', detail, { retryAfterSeconds: state.retryAfter });
}

/** A send's input as its Idempotency-Key hashes it: an attachment given as bytes as if given in base64. */
function hashed(input: SendInput): unknown {
  if (!input.attachments?.some((a) => Buffer.isBuffer(a.content))) return input;
  const attachments = input.attachments.map((a) =>
    Buffer.isBuffer(a.content) ? { ...a, content: new Base64Of(a.content) } : a,
  );
  return { ...input, attachments };
}

export function createEmails(
  deps: Deps & {
    store: EmailStore;
    domains: DomainStore;
    accounts: AccountStore;
    events: Events;
    messageEvents: MessageEvents;
    sendRate: SendRate;
    blockPatterns: RegExp[];
  },
) {
  const { store, clock, jobs, events, config } = deps;
  const idempotency = createIdempotency(deps);

  /** Accepts one message: validates, then writes it, its `email.queued` event and its delivery job in one transaction. */
  function accept(key: KeyPrincipal, input: SendInput): MessageAccepted {
    const now = clock.now();
    const f = checkFields(input, now, config.attachmentUrls);
    abuseFilter(input, f.attachments, deps.blockPatterns);
    const domain = deps.domains.statusByName(key.workspaceId, f.from.domain);
    if (key.domainId && domain?.id !== key.domainId) {
      fail(
        'domain_not_allowed',
        `This API key may only send from its own domain, not ${f.from.domain}; send from that domain or use another key.`,
      );
    }
    if (!domain || (domain.status !== 'verified' && domain.status !== 'degraded')) {
      const fix = domain
        ? `it is ${domain.status}: publish its DNS records, then run \`svc domains verify ${domain.id}\``
        : `add it with \`svc domains add ${f.from.domain}\`, publish its DNS records and verify it`;
      fail('domain_not_verified', `${f.from.domain} is not a verified domain of this workspace; ${fix}.`, {
        errors: [{ path: 'from', code: 'domain_not_verified', message: `${f.from.domain} is not verified` }],
      });
    }
    if (key.mode === 'live' && !deps.accounts.ownerOf(key.workspaceId)?.email_verified_at) {
      fail(
        'live_sending_locked',
        'Live sending unlocks once the workspace owner confirms their email address (`svc verify-email TOKEN`); use a test key until then.',
      );
    }
    const status = f.scheduledAt != null && f.scheduledAt > now ? 'scheduled' : 'queued';
    const row: MessageRow & MessageContent = {
      id: newId('msg'),
      workspace_id: key.workspaceId,
      key_id: key.keyId,
      mode: key.mode,
      domain_id: domain!.id,
      status,
      from_header: input.from.trim(),
      from_email: f.from.address,
      to_addrs: f.to.map((a) => a.address),
      cc_addrs: f.cc.map((a) => a.address),
      bcc_addrs: f.bcc.map((a) => a.address),
      reply_to: input.reply_to ?? [],
      subject: input.subject ?? '',
      html: input.html ?? null,
      text: input.text ?? null,
      // The attachments' bytes are stored apart (storeMessage); the row keeps what describes them.
      attachments: f.attachments.map(({ content: _, ...described }) => described),
      headers: input.headers ?? {},
      tags: input.tags ?? [],
      tracking: { opens: input.tracking?.opens ?? false, clicks: input.tracking?.clicks ?? true },
      scheduled_at: status === 'scheduled' ? f.scheduledAt : null,
      created_at: now,
      updated_at: now,
    };
    storeMessage(row, f.attachments);
    return { id: row.id, status, created_at: iso(now) };
  }

  // Transaction functions are built once (building one per call was a visible cost on the sending path).
  const storeMessage = deps.db.transaction((row: MessageRow & MessageContent, attachments: CheckedAttachment[]) => {
    store.insert(row);
    attachments.forEach((a, i) => {
      if (a.content === undefined) return;
      let chunk = 0;
      for (const bytes of attachmentPieces(a.content)) store.insertChunk(row.id, i, chunk++, bytes);
    });
    if (row.status === 'queued') {
      deps.messageEvents.emit(row, { type: 'email.queued' });
      jobs.enqueue('deliver', { message_id: row.id }, { lane: row.workspace_id });
    } else {
      jobs.enqueueAt('deliver', { message_id: row.id }, row.scheduled_at!, row.workspace_id);
    }
  });

  function toMessage(m: MessageRow): Message {
    const timeline = events.timeline(m.id).map(({ id: _id, ...entry }) => entry);
    return {
      id: m.id,
      status: m.status as Message['status'],
      plane: 'transactional',
      from: m.from_header,
      to: m.to_addrs,
      cc: m.cc_addrs,
      bcc: m.bcc_addrs,
      subject: m.subject,
      tags: m.tags as Tag[],
      scheduled_at: m.scheduled_at == null ? null : iso(m.scheduled_at),
      created_at: iso(m.created_at),
      events: timeline,
    };
  }

  /**
   * One message under the rules of a send and its Idempotency-Key: resolves once the message is durable (group
   * commit), or with the result kept for the key.
   */
  function send(key: KeyPrincipal, input: SendInput, idempotencyKey: string | undefined): Promise<Accepted> {
    return deps.commit(() => {
      const { result, replayed } = idempotency.run(
        key.workspaceId,
        idempotencyKey,
        { op: 'sendEmail', body: hashed(input) },
        () => accept(key, input),
      );
      return { kind: 'accepted', body: result, replayed };
    });
  }

  /**
   * A batch: each item validated and accepted or refused on its own, in request order; one key for the batch. A
   * refused item carries the Problem of its refusal, quoting `requestId` (the batch's request).
   */
  function batch(
    key: KeyPrincipal,
    items: unknown[],
    idempotencyKey: string | undefined,
    requestId: string,
  ): Promise<Extract<SendResult, { kind: 'batch' }>> {
    return deps.commit(() => {
      const { result, replayed } = idempotency.run(
        key.workspaceId,
        idempotencyKey,
        { op: 'sendBatch', body: items },
        () => ({
          data: items.map((item): BatchItem => {
            try {
              const m = accept(key, validate(SendEmailRequest, item, 'body'));
              return { status: 202, id: m.id, message_status: m.status };
            } catch (err) {
              if (!(err instanceof ServiceError)) throw err;
              const error = problemBody(err, requestId, config.origin());
              return { status: error.status, error };
            }
          }),
        }),
      );
      return { kind: 'batch', body: result, replayed };
    });
  }

  /**
   * The one entry of a send, the API's (`POST /v1/emails`, `/v1/emails/batch`) and SMTP submission's alike: the
   * ticket's rate refusal (429), the Idempotency-Key (400), the message against the contract's schema (400/422),
   * then the send's rules and its key's kept result. Answers a result, never an answer: the edge renders it. (The
   * API's body meets the schema as it is read, before its token is taken, so a malformed body takes none: it comes
   * here `checked`, and is not checked twice.)
   */
  function submit(request: SendRequest & { send: { email: unknown } | { checked: SendInput } }): Promise<Accepted>;
  function submit(request: SendRequest): Promise<SendResult>;
  async function submit(request: SendRequest): Promise<SendResult> {
    const { ticket, key } = request;
    if (ticket.refusal) throw ticket.refusal;
    const idempotencyKey = checkedKey(request.idempotencyKey);
    if ('batch' in request.send) return batch(key, request.send.batch, idempotencyKey, request.send.requestId);
    const input = 'checked' in request.send ? request.send.checked : checkedInput(request.send.email);
    return send(key, input, idempotencyKey);
  }

  return {
    /** A token of the workspace's sending bucket for one send from `source`, or its refusal (SendTicket). */
    take(workspaceId: string, source: SendSource): SendTicket {
      const rate = deps.sendRate.take(workspaceId);
      return { rate, refusal: rate.allowed ? null : rateRefusal(source, rate) };
    },

    submit,

    /** One message already checked against the schema, under the send's rules (no ticket taken): submit's last step. */
    send,

    /** GET /emails/{id} */
    get(workspaceId: string, id: string): Message {
      return toMessage(
        store.byId(workspaceId, id) ??
          fail('not_found', 'No message of this workspace has this id; use the id the send answered with.'),
      );
    },

    /** POST /emails/{id}/cancel: only from queued or scheduled; one atomic update decides a race with a worker. */
    cancel(workspaceId: string, id: string) {
      const m =
        store.byId(workspaceId, id) ??
        fail('not_found', 'No message of this workspace has this id; use the id the send answered with.');
      const now = clock.now();
      if (store.transition(m.id, 'queued', 'cancelled', now) || store.transition(m.id, 'scheduled', 'cancelled', now)) {
        return { id: m.id, status: 'cancelled' as const };
      }
      const current = store.get(m.id)!;
      if (current.status === 'cancelled') return { id: m.id, status: 'cancelled' as const };
      return fail(
        'message_not_cancellable',
        `The message is ${current.status}: it was already handed to the provider, and only queued or scheduled messages can be cancelled.`,
      );
    },

    toMessage,
    config,
  };
}
export type Emails = ReturnType<typeof createEmails>;
