// The DNS zone of a local server (`/sandbox/dns`, `/sandbox/domains/{id}/publish`): records it answers with.
import * as z from 'zod';
import { RecordKind } from './domains.js';
import { lazySchema } from './lazy.js';

export const PublishDomainRequest = lazySchema(() =>
  z.strictObject({
    kinds: z.array(RecordKind).min(1).optional(),
    state: z.enum(['visible', 'propagating']).optional(),
  }),
);
export const ZoneRecord = lazySchema(() =>
  z.object({
    host: z.string(),
    type: z.string(),
    values: z.array(z.string()),
    state: z.enum(['visible', 'propagating']),
  }),
);
export const PutDnsRequest = lazySchema(() =>
  z.strictObject({
    host: z.string().min(1).max(253),
    type: z.enum(['TXT', 'CNAME', 'MX']),
    values: z.array(z.string().max(4096)).min(1).max(50),
    state: z.enum(['visible', 'propagating']).optional(),
  }),
);
export const DeleteDnsQuery = lazySchema(() =>
  z.strictObject({ host: z.string().min(1).max(253), type: z.enum(['TXT', 'CNAME', 'MX']) }),
);
/** What `POST /sandbox/domains/{id}/publish` answers: the records published. */
export const PublishedRecords = lazySchema(() => z.object({ records: z.array(ZoneRecord) }));
