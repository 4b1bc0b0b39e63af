import * as z from 'zod';
import { lazySchema } from './lazy.js';
import { Timestamp } from './common.js';

export const DomainStatus = lazySchema(() => z.enum(['pending', 'verified', 'failed', 'degraded', 'disabled']));
export type DomainStatus = z.infer<typeof DomainStatus>;
export const DomainPurpose = lazySchema(() => z.enum(['sending', 'mailbox']));
export type DomainPurpose = z.infer<typeof DomainPurpose>;

export const RECORD_KINDS = [
  'ownership',
  'dkim',
  'spf',
  'mail_from_mx',
  'mail_from_spf',
  'dmarc',
  'tracking',
  'mx',
  'autodiscover',
  'tls_rpt',
  'mta_sts',
] as const;
export const RecordKind = lazySchema(() => z.enum(RECORD_KINDS));
export type RecordKind = z.infer<typeof RecordKind>;
export const RecordType = lazySchema(() => z.enum(['TXT', 'CNAME', 'MX', 'A', 'AAAA', 'SRV']));
export type RecordType = z.infer<typeof RecordType>;

export const DnsRecord = lazySchema(() =>
  z.object({
    kind: RecordKind,
    type: RecordType,
    host: z.string(),
    value: z.string(),
    priority: z.number().int().optional(),
    required: z.boolean(),
    status: z.enum(['pending', 'ok', 'mismatch', 'missing']),
    observed_value: z.string().optional(),
    note: z.string().optional(),
  }),
);
export type DnsRecord = z.infer<typeof DnsRecord>;

export const FindingStatus = lazySchema(() => z.enum(['ok', 'missing', 'mismatch', 'propagating']));
export type FindingStatus = z.infer<typeof FindingStatus>;
export const Finding = lazySchema(() =>
  z.object({
    kind: RecordKind,
    status: FindingStatus,
    host: z.string(),
    type: RecordType,
    required: z.boolean(),
    detail: z.string(),
    expected: z.string(),
    observed: z.string().optional(),
  }),
);
export type Finding = z.infer<typeof Finding>;

export const Domain = lazySchema(() =>
  z.object({
    id: z.string(),
    name: z.string(),
    status: DomainStatus,
    purpose: z.array(DomainPurpose),
    mail_from_subdomain: z.string(),
    tracking_host: z.string().nullable(),
    created_at: Timestamp,
    verified_at: Timestamp.nullable(),
    last_checked_at: Timestamp.nullable(),
    records: z.array(DnsRecord),
  }),
);
export type Domain = z.infer<typeof Domain>;

export const CreateDomainRequest = lazySchema(() =>
  z.strictObject({
    name: z.string().max(300),
    purpose: z.array(DomainPurpose).min(1).max(2).nullable().optional(),
  }),
);
export type CreateDomainRequest = z.infer<typeof CreateDomainRequest>;

export const UpdateDomainRequest = lazySchema(() =>
  z.strictObject({
    purpose: z.array(DomainPurpose).min(1).max(2).optional(),
    mail_from_subdomain: z.string().max(63).optional(),
    tracking_host: z.string().max(253).optional(),
  }),
);
export type UpdateDomainRequest = z.infer<typeof UpdateDomainRequest>;

export const UpdatedDomain = lazySchema(() => Domain.extend({ records_changed: z.literal(true) }));

export const DomainDns = lazySchema(() =>
  z.object({
    domain: z.string(),
    status: DomainStatus,
    last_checked_at: Timestamp.nullable(),
    records: z.array(DnsRecord),
  }),
);

export const VerifiedDomain = lazySchema(() =>
  Domain.extend({
    verified: z.boolean(),
    propagating: z.boolean(),
    findings: z.array(Finding),
  }),
);
export type VerifiedDomain = z.infer<typeof VerifiedDomain>;
