import { createRequire } from 'node:module';
import type { FieldError } from '../../contract/common.js';
import type { Message, MessageAccepted, SendEmailRequest, Tag } from '../../contract/emails.js';
import { decodePieces, includesAcross } from '../../lib/base64.js';
import { DAY, iso } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import type { AccountStore } from '../store/accounts.js';
import type { DomainStore } from '../store/domains.js';
import type { MessageContent, MessageRow, MessageStore } from '../store/messages.js';
import type { KeyPrincipal } from './keys.js';
import { parseAddress, type ParsedAddress } from './addresses.js';
import { canonicalSha256 } from './canonical.js';
import type { Deps } from './deps.js';
import { ServiceError, fail } from './errors.js';
import type { Events } from './events.js';
import { isLoopbackHost } from '../../lib/loopback.js';

// nodemailer's table of file types, loaded by the first attachment without a content type, not with the server.
const require = createRequire(import.meta.url);
const detectMimeType = (filename: string): string =>
  (require('nodemailer/lib/mime-funcs') as { detectMimeType(name: string): string }).detectMimeType(filename);

export const GTUBE = 'XJS*C4JDBQADN1.NSBN3*2IDNEN*GTUBE-STANDARD-ANTI-UBE-TEST-EMAIL*C.34X';
export const EICAR = 'X5O!P%@AP[4\\PZX54(P^)7CC)7}$EICAR-STANDARD-ANTIVIRUS-TEST-FILE!$H+H*';
const EICAR_BYTES = Buffer.from(EICAR, 'latin1');
const RESERVED_HEADERS = new Set([
  'from',
  'to',
  'cc',
  'bcc',
  'subject',
  'date',
  'message-id',
  'mime-version',
  'content-type',
  'content-transfer-encoding',
  'dkim-signature',
  'return-path',
  // The service's own header (tags travel in it); a custom one would forge them.
  'x-svc-tags',
]);
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]{1,76}$/;
/**
 * Padded base64 (RFC 4648 section 4). A length check and one character class rather than a repeated group: attachments run
 * to 40 MiB, and a pattern that backtracks over groups of four overflows the stack on a few megabytes.
 */
const isBase64 = (s: string) => s.length % 4 === 0 && /^[A-Za-z0-9+/]*={0,2}$/.test(s);
const MAX_SCHEDULE_AHEAD = 30 * DAY;
/** How long an Idempotency-Key answers with its first response. */
export const IDEMPOTENCY_WINDOW = DAY;

export interface StoredAttachment {
  filename: string;
  /** Base64, in messages stored before attachment bytes were kept apart (store/messages.ts insertChunk). */
  content?: string;
  url?: string;
  content_type: string;
  content_id?: string;
}

/** One item of a batch: accepted (its id and status) or refused (the Problem shaped by the caller). */
export type BatchItem =
  | { status: number; id: string; message_status: string }
  | { status: number; error: Record<string, unknown> };

/** What a send came to: one message accepted, or a batch whose items were each accepted or refused. */
export type Sent =
  | { kind: 'accepted'; id: string; body: MessageAccepted }
  | { kind: 'partial'; body: { data: BatchItem[] } };

/** What the caller keeps of its answer to a send under an Idempotency-Key, to give it again on a replay. */
export interface StoredAnswer {
  status: number;
  headers: Record<string, string>;
}

/** A send's outcome: fresh, or `replayed` under its Idempotency-Key with what the caller `stored` of its first answer. */
export type SendOutcome = (Sent & { replayed: false }) | (Sent & { replayed: true; stored: StoredAnswer });

type Fresh = Sent & { replayed: false };

export function createEmails(
  deps: Deps & {
    store: MessageStore;
    domains: DomainStore;
    accounts: AccountStore;
    events: Events;
    blockPatterns: RegExp[];
  },
) {
  const { store, clock, jobs, events, config } = deps;

  /** Every rule of a send request that does not need the database; 422 naming each bad field. */
  function checkFields(input: SendEmailRequest, now: number) {
    const errors: FieldError[] = [];
    const bad = (path: string, message: string, code = 'invalid') => errors.push({ path, code, message });
    const addr = (value: string, path: string): ParsedAddress | null => {
      const p = parseAddress(value);
      if (!p) bad(path, `"${value.slice(0, 100)}" is not a valid email address`);
      return p;
    };
    const from = addr(input.from, 'from');
    const toList = typeof input.to === 'string' ? [input.to] : input.to;
    const lists = {
      to: toList.map((v, i) => addr(v, typeof input.to === 'string' ? 'to' : `to.${i}`)),
      cc: (input.cc ?? []).map((v, i) => addr(v, `cc.${i}`)),
      bcc: (input.bcc ?? []).map((v, i) => addr(v, `bcc.${i}`)),
      reply_to: (input.reply_to ?? []).map((v, i) => addr(v, `reply_to.${i}`)),
    };
    if (input.subject !== undefined && /[\r\n]/.test(input.subject)) bad('subject', 'must not contain CR or LF');
    if (input.html === undefined && input.text === undefined && input.template_id === undefined) {
      bad('html', 'give at least one of html, text or template_id', 'content_required');
    }
    const attachments: StoredAttachment[] = (input.attachments ?? []).map(({ path: remote, ...given }, i) => {
      const path = `attachments.${i}`;
      // `path` is another name for `url` (what Resend's SDKs send); one of them, not both.
      if (remote !== undefined && given.url !== undefined) bad(`${path}.path`, 'give url or path, not both');
      const a = { ...given, url: given.url ?? remote };
      const urlPath = given.url === undefined && remote !== undefined ? `${path}.path` : `${path}.url`;
      if (/[/\\]/.test(a.filename) || /[\u0000-\u001f]/.test(a.filename))
        bad(`${path}.filename`, 'must not contain / or \\ or control characters');
      if ((a.content === undefined) === (a.url === undefined))
        bad(path, 'give exactly one of content and url (or path)');
      if (a.content !== undefined && !isBase64(a.content)) bad(`${path}.content`, 'must be valid base64');
      if (a.url !== undefined) {
        let u: URL | null = null;
        try {
          u = new URL(a.url);
        } catch {
          bad(urlPath, 'must be an absolute URL');
        }
        if (u && !(u.protocol === 'https:' || (u.protocol === 'http:' && isLoopbackHost(u.hostname)))) {
          bad(urlPath, 'must be https (http only to a loopback host)');
        }
      }
      if (a.content_id !== undefined && /[\s<>]/.test(a.content_id))
        bad(`${path}.content_id`, 'must not contain spaces or angle brackets');
      if (a.content_type !== undefined && /[\r\n]/.test(a.content_type))
        bad(`${path}.content_type`, 'must not contain CR or LF');
      return {
        filename: a.filename,
        ...(a.content !== undefined ? { content: a.content } : {}),
        ...(a.url !== undefined ? { url: a.url } : {}),
        content_type: a.content_type ?? detectMimeType(a.filename),
        ...(a.content_id !== undefined ? { content_id: a.content_id } : {}),
      };
    });
    for (const [name, value] of Object.entries(input.headers ?? {})) {
      if (!HEADER_NAME.test(name)) bad(`headers.${name}`, 'is not a valid header field name');
      else if (RESERVED_HEADERS.has(name.toLowerCase())) bad(`headers.${name}`, 'is reserved and set by the service');
      if (/[\r\n]/.test(value)) bad(`headers.${name}`, 'value must not contain CR or LF');
    }
    let scheduledAt: number | null = null;
    if (input.scheduled_at !== undefined) {
      scheduledAt = Date.parse(input.scheduled_at);
      if (scheduledAt > now + MAX_SCHEDULE_AHEAD) bad('scheduled_at', 'must be at most 30 days ahead');
    }
    if (errors.length) {
      throw new ServiceError('validation_failed', errors.map((e) => `${e.path}: ${e.message}`).join('; '), { errors });
    }
    if (input.template_id !== undefined) {
      fail(
        'template_not_found',
        `No template ${input.template_id.slice(0, 64)}: templates are not served yet; send html or text.`,
        {
          errors: [{ path: 'template_id', code: 'not_found', message: 'unknown template' }],
        },
      );
    }
    const defined = (l: (ParsedAddress | null)[]) => l as ParsedAddress[];
    return {
      from: from!,
      to: defined(lists.to),
      cc: defined(lists.cc),
      bcc: defined(lists.bcc),
      reply_to: defined(lists.reply_to),
      attachments,
      scheduledAt,
    };
  }

  /** GTUBE in subject/text/html, EICAR in an attachment, or an operator pattern → 451; nothing is stored. */
  function abuseFilter(input: SendEmailRequest, attachments: StoredAttachment[]) {
    const texts = [input.subject ?? '', input.text ?? '', input.html ?? ''];
    const blocked = (why: string) =>
      fail('content_blocked', `The message was refused by the abuse filter: ${why}. Remove it and send again.`);
    if (texts.some((t) => t.includes(GTUBE))) blocked('it contains the GTUBE spam test string');
    for (const a of attachments) {
      if (a.content && includesAcross(decodePieces(a.content), EICAR_BYTES))
        blocked(`attachment ${a.filename} contains the EICAR test virus`);
    }
    for (const p of deps.blockPatterns) {
      if (texts.some((t) => p.test(t))) blocked('it matches a blocked pattern of this server');
    }
  }

  function eventBase(m: MessageRow) {
    return {
      message_id: m.id,
      from: m.from_header,
      subject: m.subject,
      tags: m.tags as Tag[],
    };
  }
  function allRecipients(m: MessageRow): string[] {
    return [...m.to_addrs, ...m.cc_addrs, ...m.bcc_addrs];
  }

  /** Emits a message event into the outbox and the message's timeline. */
  function emit(
    m: MessageRow,
    type: string,
    extra: Record<string, unknown> = {},
    to: string | string[] = allRecipients(m),
  ) {
    events.emit(m.workspace_id, type, { ...eventBase(m), to, ...extra }, m.id);
  }

  /** Accepts one message: validates, then writes it, its `email.queued` event and its delivery job in one transaction. */
  function accept(key: KeyPrincipal, input: SendEmailRequest): MessageAccepted {
    const now = clock.now();
    const f = checkFields(input, now);
    abuseFilter(input, f.attachments);
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
      // The attachments' bytes are stored apart, decoded (storeMessage); the row keeps what describes them.
      attachments: f.attachments.map(({ content: _, ...described }) => described),
      headers: input.headers ?? {},
      tags: input.tags ?? [],
      tracking: { opens: input.tracking?.opens ?? false, clicks: input.tracking?.clicks ?? true },
      scheduled_at: status === 'scheduled' ? f.scheduledAt : null,
      created_at: now,
      updated_at: now,
    };
    storeMessage(row, f.attachments, now);
    return { id: row.id, status, created_at: iso(now) };
  }

  /**
   * Runs `produce` under an Idempotency-Key: a replay within 24 h returns the stored outcome with what `record` made of
   * it then, a different body → 409. All synchronous in one transaction, so concurrent requests with one key create
   * exactly one message. `record` is asked once, for a fresh outcome, what to keep for replays.
   */
  function idempotent(
    workspaceId: string,
    key: string | undefined,
    request: unknown,
    produce: () => Fresh,
    record: (outcome: Fresh) => StoredAnswer,
  ): SendOutcome {
    if (key === undefined) return produce();
    return replayOrProduce(workspaceId, key, canonicalSha256(request), produce, record);
  }

  // Transaction functions are built once (building one per call was a visible cost on the sending path).
  const storeMessage = deps.db.transaction(
    (row: MessageRow & MessageContent, attachments: StoredAttachment[], now: number) => {
      store.insert(row);
      attachments.forEach((a, i) => {
        if (a.content === undefined) return;
        let chunk = 0;
        for (const bytes of decodePieces(a.content)) store.insertChunk(row.id, i, chunk++, bytes);
      });
      if (row.status === 'queued') emit(row, 'email.queued');
      jobs.enqueue('deliver', { message_id: row.id }, row.status === 'queued' ? now : row.scheduled_at!);
    },
  );

  const replayOrProduce = deps.db.transaction(
    (
      workspaceId: string,
      key: string,
      hash: string,
      produce: () => Fresh,
      record: (outcome: Fresh) => StoredAnswer,
    ): SendOutcome => {
      const now = clock.now();
      const prior = store.idempotency(workspaceId, key);
      if (prior && prior.created_at + IDEMPOTENCY_WINDOW > now) {
        if (prior.request_hash !== hash) {
          fail(
            'idempotency_conflict',
            'This Idempotency-Key was used with a different request body in the last 24 hours; use a new key.',
          );
        }
        // The body kept is the one this function returned at first (below): a batch's, or one message's.
        const body = prior.body as Sent['body'];
        const stored: StoredAnswer = { status: prior.status, headers: prior.headers };
        return 'data' in body
          ? { kind: 'partial', body, replayed: true, stored }
          : { kind: 'accepted', id: body.id, body, replayed: true, stored };
      }
      const result = produce();
      const answer = record(result);
      if (answer.status >= 200 && answer.status < 300) {
        store.saveIdempotency({
          workspace_id: workspaceId,
          key,
          request_hash: hash,
          status: answer.status,
          body: result.body,
          headers: answer.headers,
          created_at: now,
        });
      }
      return result;
    },
  );

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

  return {
    eventBase,
    allRecipients,
    emit,

    /**
     * POST /emails: resolves once the message is durable (group commit). `record` says what to keep for a replay under
     * the Idempotency-Key.
     */
    send(
      key: KeyPrincipal,
      input: SendEmailRequest,
      idempotencyKey: string | undefined,
      record: (outcome: Fresh) => StoredAnswer,
    ): Promise<SendOutcome> {
      return deps.commit(() =>
        idempotent(
          key.workspaceId,
          idempotencyKey,
          { op: 'sendEmail', body: input },
          () => {
            const accepted = accept(key, input);
            return { kind: 'accepted', id: accepted.id, body: accepted, replayed: false };
          },
          record,
        ),
      );
    },

    /** POST /emails/batch: each item accepted or refused on its own, in request order; one key for the batch. */
    batch(
      key: KeyPrincipal,
      items: unknown[],
      idempotencyKey: string | undefined,
      validateItem: (item: unknown) => SendEmailRequest,
      problemOf: (err: ServiceError) => Record<string, unknown>,
      record: (outcome: Fresh) => StoredAnswer,
    ): Promise<SendOutcome> {
      return deps.commit(() =>
        idempotent(
          key.workspaceId,
          idempotencyKey,
          { op: 'sendBatch', body: items },
          () => {
            const data = items.map((item): BatchItem => {
              try {
                const m = accept(key, validateItem(item));
                return { status: 202, id: m.id, message_status: m.status };
              } catch (err) {
                if (!(err instanceof ServiceError)) throw err;
                const error = problemOf(err);
                return { status: error.status as number, error };
              }
            });
            return { kind: 'partial', body: { data }, replayed: false };
          },
          record,
        ),
      );
    },

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
