import { describe, expect, it } from 'vitest';
import { LOCAL_PROVIDER_HOSTS, judge, recordSet, toDnsRecord, type ExpectedRecord } from './domain-records.js';

const hosts = LOCAL_PROVIDER_HOSTS;
const inputs = {
  name: 'example.com',
  purpose: ['sending' as const],
  mailFrom: 'bounces',
  trackingHost: null,
  ownershipToken: 'tok123',
  dkimSelector: 'svc1',
  dkimPublicKey: 'PUBKEY',
};
const txt = (value: string): ExpectedRecord => ({
  kind: 'dmarc',
  type: 'TXT',
  host: '_dmarc.example.com',
  value,
  required: false,
});
const mx: ExpectedRecord = {
  kind: 'mail_from_mx',
  type: 'MX',
  host: 'bounces.example.com',
  value: 'feedback.svc.test',
  priority: 10,
  required: true,
};

describe('recordSet', () => {
  it('gives the decided sending set: ownership, dkim, MAIL FROM MX and SPF, DMARC recommended', () => {
    const set = recordSet(inputs, hosts);
    expect(set.map((r) => [r.kind, r.type, r.host, r.required])).toEqual([
      ['ownership', 'TXT', '_svc-verification.example.com', true],
      ['dkim', 'TXT', 'svc1._domainkey.example.com', true],
      ['mail_from_mx', 'MX', 'bounces.example.com', true],
      ['mail_from_spf', 'TXT', 'bounces.example.com', true],
      ['dmarc', 'TXT', '_dmarc.example.com', false],
    ]);
    expect(set[0]!.value).toBe('svc-verification=tok123');
    expect(set[1]!.value).toBe('v=DKIM1; k=rsa; p=PUBKEY');
  });

  it('adds the tracking CNAME only with a tracking host, and the mailbox set for purpose mailbox', () => {
    expect(recordSet({ ...inputs, trackingHost: 'links.example.com' }, hosts).at(-1)).toMatchObject({
      kind: 'tracking',
      type: 'CNAME',
      host: 'links.example.com',
      value: 'track.svc.test',
      required: true,
    });
    const mailbox = recordSet({ ...inputs, purpose: ['mailbox'] }, hosts);
    expect(mailbox.map((r) => r.kind)).toEqual([
      'ownership',
      'dkim',
      'mx',
      'mx',
      'spf',
      'autodiscover',
      'tls_rpt',
      'mta_sts',
    ]);
    expect(mailbox.filter((r) => r.kind === 'mx').map((r) => [r.priority, r.value])).toEqual([
      [10, 'mx1.svc.test'],
      [20, 'mx2.svc.test'],
    ]);
  });
});

describe('judge', () => {
  it('TXT matches one of the published strings exactly', () => {
    expect(judge(txt('v=DMARC1; p=none;'), [{ state: 'found', values: ['other', 'v=DMARC1; p=none;'] }]).status).toBe(
      'ok',
    );
    const f = judge(txt('v=DMARC1; p=none;'), [
      { state: 'found', values: ['v=DMARC1; p=reject;', 'google-site-verification=x'] },
    ]);
    expect(f).toMatchObject({ status: 'mismatch', expected: 'v=DMARC1; p=none;', observed: 'v=DMARC1; p=reject;' });
    expect(f.detail).toContain('v=DMARC1; p=reject;');
  });

  it('MX ignores case and the trailing dot but not the priority', () => {
    expect(judge(mx, [{ state: 'found', values: ['10 FEEDBACK.svc.test.'] }]).status).toBe('ok');
    expect(judge(mx, [{ state: 'found', values: ['20 feedback.svc.test'] }])).toMatchObject({
      status: 'mismatch',
      observed: '20 feedback.svc.test',
    });
  });

  it('missing when nothing is published; the detail says what to add', () => {
    const f = judge(mx, [{ state: 'none' }]);
    expect(f.status).toBe('missing');
    expect(f.detail).toContain('10 feedback.svc.test');
  });

  it('propagating when resolvers disagree or the zone says so; a failed lookup is missing with its reason', () => {
    expect(judge(mx, [{ state: 'found', values: ['10 feedback.svc.test'] }, { state: 'none' }]).status).toBe(
      'propagating',
    );
    expect(judge(mx, [{ state: 'propagating' }]).status).toBe('propagating');
    const f = judge(mx, [{ state: 'error', error: 'ETIMEOUT' }]);
    expect(f.status).toBe('missing');
    expect(f.detail).toContain('ETIMEOUT');
  });

  it('a propagating finding shows as a pending record; a mismatch shows its observed value', () => {
    expect(toDnsRecord(mx, judge(mx, [{ state: 'propagating' }])).status).toBe('pending');
    expect(toDnsRecord(mx, judge(mx, [{ state: 'found', values: ['5 x.test'] }]))).toMatchObject({
      status: 'mismatch',
      observed_value: '5 x.test',
    });
  });
});
