import type { Client } from '../../../client/index.js';
import type { CaughtMessage, CaughtMessageSummary } from '../../../contract/sandbox.js';
import type { IO } from '../../io.js';
import { printFields, type Column } from '../../output.js';

export const summaryColumns: Column<CaughtMessageSummary>[] = [
  { header: 'ID', value: (m) => m.id, id: true },
  { header: 'TIME', value: (m) => m.received_at, time: true },
  { header: 'FROM', value: (m) => m.from },
  { header: 'TO', value: (m) => [...m.to, ...m.cc].join(', ') },
  { header: 'SUBJECT', value: (m) => m.subject },
  { header: 'STATUS', value: (m) => m.status },
];

/** Whether `--subject` matches: a substring of the subject, case-insensitively. */
export function subjectMatches(m: CaughtMessageSummary, subject: string | undefined): boolean {
  return subject === undefined || (m.subject ?? '').toLowerCase().includes(subject.toLowerCase());
}

/**
 * Every caught message to `to` (all of them when undefined) received at or after `since`, newest first, by the
 * service's own rule for `to` (an envelope recipient, or a To or Cc address, case-insensitively).
 */
export async function caughtSince(client: Client, to: string | undefined, since: string | undefined): Promise<CaughtMessageSummary[]> {
  const all: CaughtMessageSummary[] = [];
  for (let after: string | undefined; ; ) {
    const page = (await client.sandbox('listMessages', { query: { to, since, limit: 100, after } })).body;
    all.push(...page.data);
    if (!page.has_more) return all;
    after = page.data.at(-1)!.id;
  }
}

/**
 * Whether a message just caught (from the stream) is to `to` by the service's rule. Its To and Cc are in the
 * summary; only an envelope recipient (a Bcc) needs the service, asked for the mail to `to` since it was received.
 */
export async function isTo(client: Client, to: string, m: CaughtMessageSummary): Promise<boolean> {
  const wanted = to.toLowerCase();
  if ([...m.to, ...m.cc].some((a) => a.toLowerCase() === wanted)) return true;
  return (await caughtSince(client, to, m.received_at)).some((c) => c.id === m.id);
}

/** One message for a person: its fields (aligned on a terminal, `label<TAB>value` piped), a blank line, its text. */
export function printMessage(io: IO, m: CaughtMessage): void {
  printFields(io, [
    ['id', m.id],
    ['from', m.from],
    ['to', m.to.join(', ')],
    ['cc', m.cc.join(', ')],
    ['subject', m.subject],
    ['received', m.received_at],
    ['envelope', `${m.envelope.mail_from || '<>'} → ${m.envelope.rcpt_to.join(', ')}`],
    ['status', m.status && `${m.status} (${m.message_id})`],
    ['dkim', m.dkim_domain ? `${m.dkim} (${m.dkim_domain})` : m.dkim],
    ['attachments', m.attachments.map((a) => `${a.filename ?? 'unnamed'} (${a.content_type}, ${a.size} bytes)`).join(', ')],
  ]);
  io.print('');
  if (m.text !== null) io.print(m.text.replace(/\r?\n$/, ''));
  else io.info(`This message has no text part${m.html !== null ? `; its HTML: svc inbox show ${m.id} --json | jq -r .html` : ''}.`);
}
