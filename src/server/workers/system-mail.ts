import { parseAddress } from '../core/rules/addresses.js';
import type { Composer } from '../outbound/compose.js';
import type { Sender } from '../outbound/sender.js';
import type { JobPayloads } from '../core/rules/job-kinds.js';
import type { JobHandler } from '../core/scheduler.js';

/** Sends the service's own mail (verification, notices) through the same SMTP path as every message. */
export function systemMailWorker(
  sender: Sender,
  composer: Composer,
  from: string,
): JobHandler<JobPayloads['system_mail']> {
  const envelopeFrom = parseAddress(from)?.address ?? from;
  return async (mail) => {
    const raw = await composer.compose({
      mail: { from, to: mail.to, subject: mail.subject, text: mail.text, messageId: mail.message_id },
      key: undefined,
      signTime: 0,
    });
    await sender.send({ envelope: { from: envelopeFrom, to: [mail.to] }, raw });
  };
}
