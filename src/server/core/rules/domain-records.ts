import type { DnsRecord, DomainPurpose, Finding, FindingStatus, RecordType } from '../../../contract/domains.js';
import type { ExpectedRecord } from '../../store/domains.js';
import type { DnsAnswer, ProviderHosts } from '../deps.js';

/** Provider host names customers' records point at (locally under `svc.test`). */
export const LOCAL_PROVIDER_HOSTS: ProviderHosts = {
  feedback: 'feedback.svc.test',
  spf: '_spf.svc.test',
  tracking: 'track.svc.test',
  mailboxMx: ['mx1.svc.test', 'mx2.svc.test'],
  autodiscover: 'autodiscover.svc.test',
  tlsRpt: 'tls-rpt@svc.test',
};

/** A record the customer must (or should) publish; the domain's row keeps the set (store/domains.ts). */
export type { ExpectedRecord } from '../../store/domains.js';

export interface RecordInputs {
  name: string;
  purpose: DomainPurpose[];
  mailFrom: string;
  trackingHost: string | null;
  ownershipToken: string;
  dkimSelector: string;
  dkimPublicKey: string;
}

/** The record set of a domain, exactly as decided for each purpose (docs/api.md#domains). */
export function recordSet(d: RecordInputs, hosts: ProviderHosts): ExpectedRecord[] {
  const out: ExpectedRecord[] = [
    {
      kind: 'ownership',
      type: 'TXT',
      host: `_svc-verification.${d.name}`,
      value: `svc-verification=${d.ownershipToken}`,
      required: true,
    },
    {
      kind: 'dkim',
      type: 'TXT',
      host: `${d.dkimSelector}._domainkey.${d.name}`,
      value: `v=DKIM1; k=rsa; p=${d.dkimPublicKey}`,
      required: true,
    },
  ];
  if (d.purpose.includes('sending')) {
    const mf = `${d.mailFrom}.${d.name}`;
    out.push(
      { kind: 'mail_from_mx', type: 'MX', host: mf, value: hosts.feedback, priority: 10, required: true },
      { kind: 'mail_from_spf', type: 'TXT', host: mf, value: `v=spf1 include:${hosts.spf} ~all`, required: true },
      { kind: 'dmarc', type: 'TXT', host: `_dmarc.${d.name}`, value: 'v=DMARC1; p=none;', required: false },
    );
    if (d.trackingHost)
      out.push({ kind: 'tracking', type: 'CNAME', host: d.trackingHost, value: hosts.tracking, required: true });
  }
  if (d.purpose.includes('mailbox')) {
    for (const [i, mx] of hosts.mailboxMx.entries()) {
      out.push({ kind: 'mx', type: 'MX', host: d.name, value: mx, priority: 10 * (i + 1), required: true });
    }
    out.push(
      { kind: 'spf', type: 'TXT', host: d.name, value: `v=spf1 include:${hosts.spf} ~all`, required: true },
      {
        kind: 'autodiscover',
        type: 'CNAME',
        host: `autodiscover.${d.name}`,
        value: hosts.autodiscover,
        required: false,
      },
      {
        kind: 'tls_rpt',
        type: 'TXT',
        host: `_smtp._tls.${d.name}`,
        value: `v=TLSRPTv1; rua=mailto:${hosts.tlsRpt}`,
        required: false,
      },
      {
        kind: 'mta_sts',
        type: 'TXT',
        host: `_mta-sts.${d.name}`,
        value: `v=STSv1; id=${d.ownershipToken.slice(0, 16)}`,
        required: false,
      },
    );
  }
  return out;
}

const norm = (h: string) => h.trim().toLowerCase().replace(/\.$/, '');

/** Whether one published value satisfies an expected record (TXT exact; CNAME/MX case and trailing dot ignored). */
function matches(r: ExpectedRecord, published: string): boolean {
  if (r.type === 'TXT') return published === r.value;
  if (r.type === 'CNAME') return norm(published) === norm(r.value);
  const [prio, ...rest] = published.trim().split(/\s+/);
  return Number(prio) === r.priority && norm(rest.join(' ')) === norm(r.value);
}

function display(r: ExpectedRecord): string {
  return r.type === 'MX' ? `${r.priority} ${r.value}` : r.value;
}

/** For a mismatch, the published values a person would recognise as meant for this record (same tag). */
function relevant(r: ExpectedRecord, values: string[]): string[] {
  if (r.type !== 'TXT') return values;
  const first = r.value.split(/[;\s]/)[0] ?? '';
  const prefix = first.startsWith('v=') ? first : first.slice(0, first.indexOf('=') + 1);
  const same = values.filter((v) => v.toLowerCase().startsWith(prefix.toLowerCase()));
  return same.length ? same : values;
}

/** Compares every resolver's answer for one record and says what a person must fix. */
export function judge(r: ExpectedRecord, answers: DnsAnswer[]): Finding {
  const expected = display(r);
  const per = answers.map((a): { status: FindingStatus | 'error'; observed?: string[]; error?: string } => {
    if (a.state === 'propagating') return { status: 'propagating' };
    if (a.state === 'none') return { status: 'missing' };
    if (a.state === 'error') return { status: 'error', error: a.error };
    return a.values.some((v) => matches(r, v))
      ? { status: 'ok', observed: a.values }
      : { status: 'mismatch', observed: a.values };
  });
  const base = { kind: r.kind, host: r.host, type: r.type as RecordType, required: r.required, expected };
  const statuses = new Set(per.map((p) => p.status));
  const observedOf = (s: string) => {
    const o = per.find((p) => p.status === s)?.observed;
    return o ? relevant(r, o).join(' | ') : undefined;
  };
  if (statuses.size === 1 && statuses.has('ok')) {
    return { ...base, status: 'ok', observed: expected, detail: `${r.type} ${r.host} is published correctly.` };
  }
  if (statuses.has('propagating') || (statuses.has('ok') && per.length > 1)) {
    const seen = per.filter((p) => p.status === 'ok').length;
    return {
      ...base,
      status: 'propagating',
      ...(observedOf('ok') ? { observed: observedOf('ok') } : {}),
      detail:
        per.length > 1
          ? `${r.type} ${r.host} is visible on ${seen} of ${per.length} resolvers; DNS is still propagating, check again in a few minutes.`
          : `${r.type} ${r.host} is published but not yet visible everywhere; check again in a few minutes.`,
    };
  }
  if (statuses.has('mismatch')) {
    const observed = observedOf('mismatch')!;
    return {
      ...base,
      status: 'mismatch',
      observed,
      detail: `${r.type} ${r.host} has "${observed}" but must be "${expected}": replace the published value.`,
    };
  }
  const error = per.find((p) => p.status === 'error')?.error;
  return {
    ...base,
    status: 'missing',
    detail: error
      ? `Looking up ${r.type} ${r.host} failed (${error}); check that the zone is served, then verify again.`
      : `No ${r.type} record at ${r.host}: add one with value "${expected}".`,
  };
}

/** The record as the API shows it, with the outcome of the last check when there was one. */
export function toDnsRecord(r: ExpectedRecord, finding?: Finding): DnsRecord {
  const status = !finding || finding.status === 'propagating' ? 'pending' : finding.status;
  return {
    kind: r.kind,
    type: r.type,
    host: r.host,
    value: r.value,
    ...(r.priority != null ? { priority: r.priority } : {}),
    required: r.required,
    status,
    ...(finding?.observed && finding.status !== 'ok' ? { observed_value: finding.observed } : {}),
    ...(r.required ? {} : { note: 'Recommended, not required for verification.' }),
  };
}
