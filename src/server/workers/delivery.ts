// Delivery: claims a message, builds its MIME with nodemailer, DKIM-signs it with the domain's key and hands it
// to the sink. The rules of each transition live in core/delivery.ts. (Live mail goes on through the relay once the sink
// has caught it, as a relay rule's job: core/relay.ts, workers/relay.ts.)
import { isIP } from 'node:net';
import type Mail from 'nodemailer/lib/mailer/index.js';
import type { ByteBudget } from '../../lib/byte-budget.js';
import { connectLookup, type HostAddress, hostLookup } from '../../lib/dns.js';
import type { Logger } from '../../lib/log.js';
import { isLoopbackHost } from '../../lib/loopback.js';
import { loadUndici } from '../../lib/undici.js';
import { ComposeThreadDied, type Composer, type ComposeRequest } from '../outbound/compose.js';
import { BIG_MESSAGE_BYTES } from '../core/rules/big-message.js';
import { addressRefusal, type AttachmentUrlPolicy, portOf } from '../core/rules/attachment-urls.js';
import { EICAR } from '../core/rules/send-rules.js';
import type { Delivery, OutgoingMessage } from '../core/delivery.js';
import type { Domains } from '../core/domains.js';
import type { Tracking } from '../core/tracking.js';
import type { OutgoingMail, Sender } from '../outbound/sender.js';
import type { JobPayloads } from '../core/rules/job-kinds.js';
import type { JobHandler } from '../core/scheduler.js';
import { DISK_FULL_WAIT_MS, handOverFailure, JOB_MAX_ATTEMPTS, jobRetryDelay } from '../core/rules/retry-policy.js';
import { messageIdHeader } from '../core/rules/message-ids.js';
import { hop } from '../../lib/hops.js';

const FETCH_TIMEOUT_MS = 10_000;
const SINK = 'The sandbox sink';
const MAX_FETCH_BYTES = 40 * 1024 * 1024;
/** `localhost` and its subdomains are this machine without asking DNS (RFC 6761), as in the links check. */
const LOOPBACK: HostAddress[] = [
  { address: '127.0.0.1', family: 4 },
  { address: '::1', family: 6 },
];

/**
 * Bytes of messages between their claim and the sink's answer, as the body budget holds the requests that bring them
 * (http/body.ts): each is held as its attachments read back, then as its signed MIME on the compose thread, on the
 * socket and in the sink, a few times over at moments, so a few dozen big messages at once would hold gigabytes.
 */
export const DELIVERY_BUDGET_BYTES = 48 * 1024 * 1024;
/** A text longer than this goes to the compose thread as its bytes (build, below). */
const LONG_TEXT_BYTES = 128 * 1024;

export interface DeliveryWorkerDeps {
  delivery: Delivery;
  domains: Domains;
  tracking: Tracking;
  sender: Sender;
  composer: Composer;
  /** Bytes of messages in delivery at once (DELIVERY_BUDGET_BYTES); a message waits for room before it is claimed. */
  budget: ByteBudget;
  /**
   * Starts a full garbage collection (`svc serve`'s binary exposes V8's; absent elsewhere). Run when a big message is
   * through and no other is in delivery: its copies are garbage then, and a server gone idle would otherwise keep
   * them resident until V8 next collects on its own, up to a minute later (bench:big-mail).
   */
  collect?: () => void;
  /** The server's origin (`http://127.0.0.1:4010`), for tracking links without a tracking host. */
  origin: () => string;
  /** Where an attachment's `url` may lead, checked against the address the fetch connects to. */
  attachmentUrls: AttachmentUrlPolicy;
  /** The DNS server an attachment url's host is looked up with; null: the system's lookup. */
  dnsServer: string | null;
  log: Logger;
}

export function deliveryWorker(deps: DeliveryWorkerDeps): JobHandler<JobPayloads['deliver']> {
  const lookupHost = hostLookup(deps.dnsServer, FETCH_TIMEOUT_MS);

  /**
   * An attachment's `url`, fetched through a connector of its own, whose lookup checks every address it answers with
   * the url's port: the address connected to is the one checked, whatever the name led to when the message was sent
   * (docs/api.md#attachment-urls). A redirect is not followed. What went wrong is logged for the operator; the sender
   * is told only that the url was refused or failed, never what answered it (which would make a scanner of the
   * service, for the network it runs in).
   */
  async function fetchAttachment(messageId: string, filename: string, url: URL): Promise<Buffer> {
    const port = portOf(url);
    let refused: string | null = null;
    const allowed = async (host: string): Promise<HostAddress[]> => {
      const family = isIP(host);
      const addresses = family ? [{ address: host, family }] : isLoopbackHost(host) ? LOOPBACK : await lookupHost(host);
      refused = addresses.map((a) => addressRefusal(a.address, port, deps.attachmentUrls)).find((r) => r) ?? null;
      if (refused) throw new Error(refused);
      return addresses;
    };
    const { Agent, request } = await loadUndici();
    const agent = new Agent({ connect: { lookup: connectLookup(allowed), timeout: FETCH_TIMEOUT_MS } });
    let body: Buffer;
    try {
      // The connector looks names up, and connects to an address as it is: that one is checked here.
      const host = url.hostname.replace(/^\[|\]$/g, '');
      if (isIP(host)) await allowed(host);
      const res = await request(url, { dispatcher: agent, signal: AbortSignal.timeout(FETCH_TIMEOUT_MS) });
      if (res.statusCode < 200 || res.statusCode > 299) {
        await res.body.dump();
        throw new Error(`HTTP ${res.statusCode}`);
      }
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of res.body as AsyncIterable<Buffer>) {
        size += chunk.length;
        if (size > MAX_FETCH_BYTES) throw new Error('larger than 40 MiB');
        chunks.push(chunk);
      }
      body = Buffer.concat(chunks, size);
    } catch (err) {
      const error = refused ?? (err as Error).message;
      deps.log.info('an attachment url was not fetched', { message_id: messageId, filename, error });
      throw new Error(
        refused
          ? `attachment ${filename} was refused (its url leads to this server or to an address that is not public)`
          : `attachment ${filename} failed (its url could not be fetched)`,
      );
    } finally {
      await agent.destroy();
    }
    // The abuse filter's EICAR rule covers fetched attachments too: such a message fails instead of being sent.
    if (body.includes(EICAR)) {
      throw new Error(
        `attachment ${filename} was blocked by the abuse filter (content_blocked): it contains the EICAR test virus`,
      );
    }
    return body;
  }

  const keys = new Map<string, { domainName: string; keySelector: string; privateKey: string }>();
  const signingKey = (domainId: string) => {
    let k = keys.get(domainId);
    if (!k) {
      k = deps.domains.signingKey(domainId);
      if (!k) return undefined;
      keys.set(domainId, k);
    }
    return k;
  };

  async function build(out: OutgoingMessage): Promise<Pick<ComposeRequest, 'mail' | 'pieces'>> {
    const m = out.row;
    const attachments: Mail.Attachment[] = [];
    const stored = out.attachments.length ? deps.delivery.attachmentChunks(m.id) : new Map<number, Buffer[]>();
    const pieces: Buffer[][] = [];
    for (const [i, a] of out.attachments.entries()) {
      pieces[i] = a.url
        ? [await fetchAttachment(m.id, a.filename, new URL(a.url))]
        : a.content !== undefined
          ? [Buffer.from(a.content, 'base64')]
          : (stored.get(i) ?? []);
      attachments.push({
        filename: a.filename,
        contentType: a.content_type,
        ...(a.content_id ? { cid: a.content_id } : {}),
      });
    }
    const origin = deps.origin();
    const base = out.domain.trackingHost ? origin.replace(/\/\/[^/:]+/, `//${out.domain.trackingHost}`) : origin;
    const html = out.html == null ? undefined : deps.tracking.instrument(out.html, m.id, base, out.tracking);
    const headers: Record<string, string> = { ...out.headers };
    if (out.tags.length) {
      headers['X-Svc-Tags'] = out.tags.map((t) => `${t.name}=${encodeURIComponent(t.value)}`).join('; ');
    }
    const replyTo = m.reply_to;
    const mail: Mail.Options = {
      from: m.from_header,
      to: m.to_addrs,
      cc: m.cc_addrs,
      bcc: m.bcc_addrs,
      ...(replyTo.length ? { replyTo } : {}),
      subject: m.subject,
      // A long text goes as its bytes, handed to the compose thread without a copy; nodemailer builds the same message
      // from them as from the string (past 128 KiB it treats a string as it does bytes: compose.test.ts), and a short
      // one goes as the string.
      ...(out.text != null ? { text: out.text.length > LONG_TEXT_BYTES ? out.text : out.text.toString() } : {}),
      ...(html != null ? { html } : {}),
      attachments,
      headers,
      messageId: messageIdHeader(m.id, out.domain.name),
      date: new Date(m.created_at),
    };
    return { mail, pieces };
  }

  /** Messages between their room in the budget and the end of their delivery: one is a message that comes alone. */
  let running = 0;

  /** The signed raw message and its envelope, as handed to the provider. */
  async function compose(out: OutgoingMessage): Promise<OutgoingMail> {
    const raw = await deps.composer.compose(
      {
        ...(await build(out)),
        key: signingKey(out.row.domain_id),
        signTime: Math.floor(out.row.created_at / 1000),
      },
      running === 1,
    );
    return {
      envelope: { from: `bounces+${out.row.id}@${out.domain.mailFrom}.${out.domain.name}`, to: out.recipients },
      raw,
    };
  }

  /** Hands the message to the sink; throws the SMTP error it refused with. */
  async function handOver(mail: OutgoingMail): Promise<void> {
    await deps.sender.send(mail).catch((err: SmtpError) => {
      throw Object.assign(err, { who: SINK });
    });
  }

  /** A message's way from its claim to the sink, holding its size of the budget until it is over. */
  async function deliver(message_id: string, attempts: number): Promise<void> {
    hop('delivery: job runs');
    const out = await deps.delivery.claim(message_id);
    hop('delivery: claimed (committed)');
    if (!out) return;
    if (deps.delivery.refusedByProvider(out)) {
      await deps.delivery.failed(message_id, 'The provider refused the message (simulated failure).');
      return;
    }
    let mail: OutgoingMail;
    try {
      mail = await compose(out);
      hop('delivery: built and signed');
    } catch (err) {
      // The thread that was building it stopped: nothing is wrong with the message, it waits for the next attempt.
      if (err instanceof ComposeThreadDied) {
        await deps.delivery.requeue(message_id);
        throw err;
      }
      await deps.delivery.failed(message_id, `The message could not be built: ${(err as Error).message}.`);
      return;
    }
    try {
      await handOver(mail);
      hop('delivery: the sink answered 250');
    } catch (err) {
      const e = err as SmtpError;
      const failure = handOverFailure(e.responseCode, e.who === SINK);
      if (failure === 'final') {
        await deps.delivery.failed(
          message_id,
          `${e.who ?? 'The receiving server'} refused the message: ${smtpReason(e)}.`,
        );
        return;
      }
      // A full disk waits for space without using up an attempt; another temporary refusal is a deferral, with the
      // job's next attempt, and after the last one the message fails instead.
      const full = failure === 'disk-full';
      const retryInMs = full ? DISK_FULL_WAIT_MS : jobRetryDelay(attempts);
      if (retryInMs === null) {
        await deps.delivery.requeue(message_id);
      } else {
        await deps.delivery.deferred(out, {
          smtpCode: e.responseCode ?? null,
          reason:
            e.responseCode !== undefined
              ? `${e.who ?? 'The receiving server'} answered ${smtpReason(e)}; the message will be tried again.`
              : `${e.who ?? 'The receiving server'} could not be reached (${smtpReason(e)}); the message will be tried again.`,
          retryInMs,
        });
      }
      if (full) throw Object.assign(e, { diskFull: true });
      throw err;
    }
    await deps.delivery.sent(out);
    hop('delivery: sent (committed)');
  }

  return {
    async run({ message_id }, job) {
      // Room is taken before the claim: a message waiting for it is still `queued`, and can be cancelled.
      const size = deps.delivery.sizeOf(message_id);
      const give = await deps.budget.take(size);
      running++;
      try {
        await deliver(message_id, job.attempts);
      } finally {
        running--;
        give();
        if (size >= BIG_MESSAGE_BYTES && deps.budget.held === 0) deps.collect?.();
      }
    },
    /** Every attempt met a temporary refusal or no connection: the message ends `failed`, saying why. */
    async exhausted({ message_id }: { message_id: string }, err: unknown) {
      const e = err as SmtpError;
      const last = e.who ? `${e.who} answered ${smtpReason(e)}` : (e as Error).message;
      await deps.delivery.failed(
        message_id,
        `Delivery was tried ${JOB_MAX_ATTEMPTS} times without success; the last attempt: ${last}.`,
      );
    },
  };
}

type SmtpError = Error & { responseCode?: number; response?: string; who?: string };

/** The server's reply (`554 5.7.1 Rejected`), or what went wrong when there was none. */
function smtpReason(e: SmtpError): string {
  return (e.response ?? e.message).replace(/\s+/g, ' ').trim();
}
