// SMTP submission: the service's own SMTP interface, for applications that send by SMTP rather than through the API
// (docs/smtp.md). Two listeners, STARTTLS and implicit TLS, with AUTH required and taken only over TLS: any username,
// an API key as the password, the failed logins of a client address throttled as sign-in's are. A submitted message
// is a send by that key: its MIME is made into a send request (submitted-message.ts), its attachments as their bytes,
// and handed to core's one entry of a send (`emails.submit`), as `POST /v1/emails` is: the rate limit (its token taken
// at MAIL FROM), the Idempotency-Key and the rules are core's, so its events, webhooks and DKIM-signed delivery into
// the sink follow as for the API.
import { SMTPServer, type SMTPServerAuthentication, type SMTPServerSession } from 'smtp-server';
import type { ErrorCode } from '../../contract/common.js';
import { endpoints } from '../../contract/endpoints.js';
import { gather } from '../../lib/gather.js';
import type { Logger } from '../../lib/log.js';
import type { SendTicket } from '../core/emails.js';
import type { Core } from '../core/index.js';
import { ServiceError } from '../core/errors.js';
import { listener, MAX_CONNECTIONS, pipelining, type Sink } from './sink.js';
import { SubmittedMessageError, submittedRequest } from './submitted-message.js';

export interface SubmissionDeps {
  log: Logger;
  core: Pick<Core, 'access' | 'emails'>;
  /** Counts a connection on a listener (`submission`: STARTTLS, `submissions`: implicit TLS): core/metrics.ts. */
  connectionOpened?: (listener: 'submission' | 'submissions') => () => void;
}

export interface SubmissionOptions {
  tls: { key: Buffer; cert: Buffer };
  /** The largest message taken, in bytes (552 beyond it); by default the API's largest send request. */
  maxMessageBytes: number;
  maxConnections?: number;
}

/** What a session keeps of its login: the name given (any) and the key, checked again for every message. */
interface Login {
  name: string;
  key: string;
  workspaceId: string;
}

/**
 * The user of a session on the STARTTLS port until it has upgraded. smtp-server offers AUTH in its EHLO reply to a
 * session without a user only, so a client that never upgrades is not invited to send its key in the clear (RFC 4954
 * section 4); an AUTH sent anyway is refused with 538 before its credential is read, as the library refuses AUTH
 * before STARTTLS, and STARTTLS leaves the session with no user (RFC 3207 section 4.2), so AUTH is offered after it.
 */
const BEFORE_TLS = Symbol('before STARTTLS');

const MiB = 1024 * 1024;

/** A refusal as smtp-server sends it: the reply code, and the text after our own enhanced status code (RFC 3463). */
function refusal(code: number, enhanced: string, text: string): Error {
  // One reply line stays within RFC 5321's 512 octets.
  const line = text.length > 480 ? `${text.slice(0, 479)}…` : text;
  return Object.assign(new Error(`${enhanced} ${line}`), { responseCode: code });
}

/** How a refused send answers: the code and enhanced status of each error code a send can meet. */
const REPLIES: Partial<Record<ErrorCode, [number, string]>> = {
  rate_limited: [451, '4.7.1'],
  insufficient_storage: [452, '4.3.1'],
  payload_too_large: [552, '5.3.4'],
  domain_not_verified: [550, '5.7.1'],
  domain_not_allowed: [550, '5.7.1'],
  live_sending_locked: [550, '5.7.1'],
  workspace_suspended: [550, '5.7.1'],
  content_blocked: [554, '5.7.1'],
  invalid_api_key: [535, '5.7.8'],
  insufficient_scope: [535, '5.7.8'],
  ip_not_allowed: [535, '5.7.8'],
};

/** A failed send as an SMTP reply; a fault of ours is a temporary 451, logged, so the client tries again. */
function replyTo(err: unknown, log: Logger): Error {
  if (err instanceof SubmittedMessageError) return refusal(...err.reply, err.message);
  if (err instanceof ServiceError) {
    const [code, enhanced] = REPLIES[err.code] ?? [550, '5.6.0'];
    return refusal(code, enhanced, err.detail ?? err.code);
  }
  log.error('submission could not take a message', { error: (err as Error).message });
  return refusal(451, '4.3.0', 'The message could not be taken; try again.');
}

/** The two submission listeners: `starttls` (port 587's role) and `implicit` (port 465's), on one set of handlers. */
export function createSubmission(deps: SubmissionDeps, opts: SubmissionOptions): { starttls: Sink; implicit: Sink } {
  const { core, log } = deps;
  const requirement = endpoints.sendEmail;
  const loginOf = (session: SMTPServerSession) => session.user as unknown as Login;
  /** The token each session's current message took at MAIL FROM, spent by its DATA. */
  const tickets = new WeakMap<SMTPServerSession, SendTicket>();
  const flow = pipelining();

  /**
   * AUTH PLAIN or LOGIN: the password must be an API key allowed to send (`535 5.7.8` with the reason otherwise); a
   * client address past its failed logins is refused with `454 4.7.0` and the wait, before the password is looked at.
   */
  function onAuth(
    auth: SMTPServerAuthentication,
    session: SMTPServerSession,
    callback: (err: Error | null | undefined, response?: { user: unknown }) => void,
  ): void {
    const key = auth.password ?? '';
    core.access.login(requirement, key, session.remoteAddress).then(
      (caller) => callback(null, { user: { name: auth.username ?? '', key, workspaceId: caller.workspace.id } }),
      (err: unknown) => {
        if (!(err instanceof ServiceError)) return callback(replyTo(err, log));
        if (err.code === 'rate_limited') {
          return callback(
            refusal(
              454,
              '4.7.0',
              `Too many failed logins from ${session.remoteAddress}; try again in ${err.extra.retryAfterSeconds} seconds.`,
            ),
          );
        }
        // Whatever makes the key unfit to send with is said in the one reply RFC 4954 has for it.
        const detail =
          err.code === 'invalid_token' || err.code === 'api_key_required'
            ? 'The password must be an API key of this service (svc_…): create one with `svc keys create --scope emails:send --smtp`.'
            : (err.detail ?? err.code);
        callback(refusal(535, '5.7.8', detail));
      },
    );
  }

  function onData(
    stream: NodeJS.ReadableStream & { sizeExceeded?: boolean },
    session: SMTPServerSession,
    answered: (err?: Error | null, message?: string) => void,
  ) {
    const done = flow.answer(answered);
    const login = loginOf(session);
    const ticket = tickets.get(session)!;
    const rcptTo = session.envelope.rcptTo.map((r) => r.address);
    const args = session.envelope.mailFrom ? session.envelope.mailFrom.args : false;
    const declared = Number((args && (args as { SIZE?: string }).SIZE) ?? 0);
    const raw = gather(declared <= opts.maxMessageBytes ? declared : 0);
    let size = 0;
    stream.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= opts.maxMessageBytes) raw.add(chunk);
    });
    stream.on('error', () => {});
    stream.on('end', () => {
      if (stream.sizeExceeded || size > opts.maxMessageBytes) {
        const limit = opts.maxMessageBytes;
        return done(
          refusal(
            552,
            '5.3.4',
            `The message is over the ${limit}-byte (${limit / MiB} MiB) limit of SMTP submission; send it with smaller attachments.`,
          ),
        );
      }
      send(login, ticket, raw.bytes(), rcptTo, session.remoteAddress).then(
        (id) => done(null, `2.0.0 OK ${id}`),
        (err: unknown) => done(replyTo(err, log)),
      );
    });
  }

  /** One submitted message, sent as `POST /v1/emails` sends: resolves with the message's id. */
  async function send(login: Login, ticket: SendTicket, raw: Buffer, rcptTo: string[], ip: string): Promise<string> {
    // Checked again: the key may have been revoked, or the workspace suspended, since the session logged in.
    const caller = await core.access.authorize(requirement, login.key, ip);
    const { request, idempotencyKey } = await submittedRequest(raw, rcptTo);
    const sent = await core.emails.submit({ ticket, key: caller.principal, idempotencyKey, send: { email: request } });
    return sent.body.id;
  }

  function server(secure: boolean): Sink {
    const smtp = new SMTPServer({
      name: 'svc-submission',
      banner: 'svc SMTP submission: log in with any username and an API key as the password',
      secure,
      key: opts.tls.key,
      cert: opts.tls.cert,
      authOptional: false,
      authMethods: ['PLAIN', 'LOGIN'],
      authRequiredMessage: '5.7.0 Authentication required: log in with any username and an API key as the password',
      // The replies carry enhanced status codes of our own choosing (refusal()): the library's default for 550 is
      // 5.1.1, "bad destination mailbox", where a refused sender domain is 5.7.1.
      hideENHANCEDSTATUSCODES: true,
      disableReverseLookup: true,
      size: opts.maxMessageBytes,
      maxClients: opts.maxConnections ?? MAX_CONNECTIONS,
      closeTimeout: 5_000,
      logger: false,
      onConnect(session, callback) {
        if (!secure) session.user = BEFORE_TLS;
        callback();
      },
      onAuth,
      // Each message takes a token from the workspace's sending bucket, as each API send does; refused here, before
      // the client sends the message (core words the refusal: 451 4.7.1).
      onMailFrom(_address, session, callback) {
        if (session.user === BEFORE_TLS) {
          return callback(
            refusal(
              530,
              '5.7.0',
              'Must issue a STARTTLS command first: this port takes AUTH and mail only over TLS (or use the implicit TLS port).',
            ),
          );
        }
        const ticket = core.emails.take(loginOf(session).workspaceId, 'smtp');
        tickets.set(session, ticket);
        flow.mail(callback, ticket.refusal ? replyTo(ticket.refusal, log) : undefined);
      },
      onRcptTo: (_address, _session, callback) => callback(),
      onData,
    });
    smtp.on('error', (err: NodeJS.ErrnoException) => {
      // A port that is taken is answered where it is listened on (the start stops), not logged here.
      if (err.syscall !== 'listen') log.warn('smtp submission error', { error: err.message });
    });
    const opened = deps.connectionOpened;
    return listener(smtp, log, opened && (() => opened(secure ? 'submissions' : 'submission')));
  }

  return { starttls: server(false), implicit: server(true) };
}
