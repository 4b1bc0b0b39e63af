import type { CaughtMessage, CaughtMessageSummary } from '../../../contract/inbox.js';
import type { IO } from '../../io.js';
import { printFields, type Column, visible } from '../../output.js';

export const summaryColumns: Column<CaughtMessageSummary>[] = [
  { header: 'ID', value: (m) => m.id, id: true },
  { header: 'TIME', value: (m) => m.received_at, time: true },
  { header: 'FROM', value: (m) => m.from },
  { header: 'TO', value: (m) => [...m.to, ...m.cc].join(', ') },
  { header: 'SUBJECT', value: (m) => m.subject },
  { header: 'STATUS', value: (m) => m.status },
];

export { caughtSince, isTo, subjectMatches, workspaceMatches } from '../../../client/inbox-wait.js';

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
    [
      'attachments',
      m.attachments.map((a) => `${a.filename ?? 'unnamed'} (${a.content_type}, ${a.size} bytes)`).join(', '),
    ],
  ]);
  io.print('');
  if (m.text !== null) io.print(visible(m.text).replace(/\n$/, ''));
  else
    io.info(
      `This message has no text part${m.html !== null ? `; its HTML: svc inbox show ${m.id} --json | jq -r .html` : ''}.`,
    );
  // What the view left out (`truncated`: a text past 1 MiB, parts past 500…), and where the whole of it is.
  for (const note of m.omitted) io.info(note);
  if (m.truncated) io.info(`The whole message: svc inbox show ${m.id} --raw > ${m.id}.eml`);
}
