// A caught message as the sandbox serves it: its listing summary, its HTML as a document of its own (which can run
// no script and, until the reader allows it, load nothing from elsewhere), and its attachments' bytes.
import { simpleParser, type Attachment } from 'mailparser';
import type { CaughtMessageSummary, WebhookAttempt, WebhookDelivery } from '../../contract/sandbox.js';
import { iso } from '../../lib/clock.js';
import type { SinkSummaryRow } from '../store/sink.js';

export function summaryOf(r: SinkSummaryRow): CaughtMessageSummary {
  return {
    id: r.id,
    message_id: r.svc_message_id,
    from: r.from_addr,
    to: JSON.parse(r.to_addrs),
    cc: JSON.parse(r.cc_addrs),
    subject: r.subject,
    received_at: iso(r.received_at),
    size: r.size,
    status: r.status,
    workspace: r.workspace_id && r.workspace_name != null ? { id: r.workspace_id, name: r.workspace_name } : null,
    preview: r.preview,
    has_attachments: r.has_attachments === 1,
    read: r.read_at != null,
  };
}

/**
 * Attempts (oldest first) as each event's deliveries: grouped by endpoint, endpoints in the order of their first
 * attempt, then by delivery (a redelivery after the original); `urls` names the endpoints that still exist.
 */
export function deliveriesByEvent(attempts: WebhookAttempt[], urls: Map<string, string>): Map<string, WebhookDelivery[]> {
  const byEvent = new Map<string, Map<string, Map<number, WebhookDelivery>>>();
  for (const a of attempts) {
    let endpoints = byEvent.get(a.event_id);
    if (!endpoints) byEvent.set(a.event_id, (endpoints = new Map()));
    let deliveries = endpoints.get(a.endpoint_id);
    if (!deliveries) endpoints.set(a.endpoint_id, (deliveries = new Map()));
    let d = deliveries.get(a.delivery_id);
    if (!d) deliveries.set(a.delivery_id, (d = { delivery_id: a.delivery_id, endpoint_id: a.endpoint_id, url: urls.get(a.endpoint_id) ?? null, attempts: [] }));
    d.attempts.push(a);
  }
  const out = new Map<string, WebhookDelivery[]>();
  for (const [eventId, endpoints] of byEvent) {
    out.set(eventId, [...endpoints.values()].flatMap((deliveries) => [...deliveries.values()].sort((x, y) => x.delivery_id - y.delivery_id)));
  }
  return out;
}

/** The `d=` tag of the first DKIM-Signature field. */
export function dkimDomain(headers: { name: string; value: string }[]): string | null {
  const sig = headers.find((h) => h.name.toLowerCase() === 'dkim-signature');
  return sig ? (/(?:^|;)\s*d\s*=\s*([^;\s]+)/i.exec(sig.value)?.[1]?.toLowerCase() ?? null) : null;
}

/** The message parsed in full, attachments' content included, with `cid:` images of the HTML inlined as data URLs. */
export function parseFull(raw: Buffer) {
  return simpleParser(raw, { skipHtmlToText: true, skipTextToHtml: true });
}

/**
 * The policy of a message's HTML document: nothing but inline styles and images carried in the message (data URLs)
 * unless remote content is allowed; never a script (also sandboxed by the header itself, should the document be
 * opened on its own); links open outside the inbox.
 */
export function messageCsp(remote: boolean): string {
  const elsewhere = remote ? ' http: https:' : '';
  return [
    "default-src 'none'",
    `img-src data:${elsewhere}`,
    `style-src 'unsafe-inline'${elsewhere}`,
    `font-src data:${elsewhere}`,
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'self'",
    'sandbox allow-popups allow-popups-to-escape-sandbox',
  ].join('; ');
}

/**
 * The message's HTML as served in the inbox's iframe: links open in a new tab (`<base target>`), and a meta refresh
 * (which would navigate the frame to a remote page even with remote content blocked) is removed.
 */
export function messageDocument(html: string): string {
  const cleaned = html.replace(/<meta\b[^>]*http-equiv\s*=\s*["']?\s*refresh[^>]*>/gi, '');
  const base = '<base target="_blank">';
  // After <head>, else <html>, else the doctype, else first: a tag before the doctype would switch to quirks mode.
  for (const re of [/<head\b[^>]*>/i, /<html\b[^>]*>/i, /<!doctype\b[^>]*>/i]) {
    const m = re.exec(cleaned);
    if (m) return cleaned.slice(0, m.index + m[0].length) + base + cleaned.slice(m.index + m[0].length);
  }
  return base + cleaned;
}

/** Response headers of an attachment download: always a download, never rendered or sniffed as a page of ours. */
export function attachmentHeaders(a: Attachment, n: number): Record<string, string> {
  const name = a.filename || `attachment-${n}`;
  const ascii = name.replace(/[^\x20-\x7e]|["\\]/g, '_');
  return {
    'Content-Disposition': `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(name)}`,
    'X-Content-Type-Options': 'nosniff',
    'Content-Security-Policy': "default-src 'none'; sandbox",
  };
}

/** A media type safe to put in a header: `type/subtype` only (the parameters of a hostile message are dropped). */
export function mediaType(type: string): string {
  return /^[\w.+-]+\/[\w.+-]+$/.test(type) ? type : 'application/octet-stream';
}
