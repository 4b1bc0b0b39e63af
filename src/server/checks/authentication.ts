// `authentication`: SPF, DKIM and DMARC as a receiving server would judge the message (mailauth's `authenticate`,
// through mailauth.ts, with the server's DNS: the sandbox zone under `--dns sandbox`, real DNS under `--dns system`),
// and what a receiver then does with it (docs/checks.md#authentication).
import ipaddr from 'ipaddr.js';
import { getDomain } from 'tldts';
import type { CheckFinding } from '../../contract/checks.js';
import { authenticate, type MailauthResolver } from './mailauth.js';

export interface AuthInput {
  raw: Buffer;
  /** The envelope's MAIL FROM (the Return-Path), the client's address and the name it said HELO/EHLO with. */
  mailFrom: string | null;
  clientIp: string | null;
  helo: string | null;
  /** The From address's domain. */
  fromDomain: string | null;
}

export type AuthOutcome =
  | { skipped: string }
  | { skipped: null; results: { spf: string; dkim: string; dmarc: string }; findings: CheckFinding[] };

const org = (domain: string) => getDomain(domain) ?? domain;

export async function authenticationCheck(
  input: AuthInput,
  resolver: MailauthResolver,
  dns: 'sandbox' | 'system',
): Promise<AuthOutcome> {
  const ip = input.clientIp ? ipaddr.process(input.clientIp).toString() : undefined;
  const res = await authenticate(
    input.raw,
    {
      ip,
      helo: input.helo ?? undefined,
      sender: input.mailFrom ?? undefined,
      mta: 'svc-sink',
      disableArc: true,
      disableBimi: true,
    },
    resolver,
  );
  const findings: CheckFinding[] = [];
  const from = input.fromDomain;
  const where =
    dns === 'sandbox'
      ? 'in the sandbox zone (svc serve looks records up there with --dns sandbox: publish them with `svc sandbox dns set` or PUT /sandbox/dns, or run it with --dns system)'
      : 'in DNS';

  const signatures = res.dkim.results.filter((r) => r.status.result !== 'none');
  const dkimPass = signatures.filter((r) => r.status.result === 'pass');
  const dkimAligned = dkimPass.find((r) => from && org(r.signingDomain) === org(from));
  const dkim = dkimPass.length ? 'pass' : (signatures[0]?.status.result ?? 'none');
  const [signature] = signatures;
  const [passed] = dkimPass;
  if (!signature) {
    findings.push({
      severity: 'warning',
      rule: 'dkim-missing',
      title: 'Not signed with DKIM',
      detail:
        'The message has no DKIM-Signature: Gmail and Yahoo require DKIM of bulk senders, and without it only SPF ' +
        'can authenticate the message (which a forward breaks). Sign it with a key published for the From domain.',
    });
  } else if (!passed) {
    findings.push({
      severity: 'error',
      rule: 'dkim-fail',
      title: `The DKIM signature of ${signature.signingDomain} does not verify`,
      detail: `${signature.status.result}${signature.status.comment ? `: ${signature.status.comment}` : ''}. A receiver treats the message as unsigned, or as tampered with.`,
    });
  } else if (!dkimAligned && from) {
    findings.push({
      severity: 'warning',
      rule: 'dkim-not-aligned',
      title: `Signed by ${passed.signingDomain}, not by the From domain`,
      detail: `The signature verifies but its d= domain is not ${org(from)}, so it does not count for DMARC: sign with a key of ${from}.`,
    });
  }

  const spf = res.spf || null;
  const spfResult = spf ? spf.status.result : 'none';
  const spfDomain = spf ? spf.domain : (input.mailFrom?.split('@').pop() ?? null);
  const spfAligned = spfResult === 'pass' && from && spfDomain && org(spfDomain) === org(from);
  if (!ip) {
    findings.push({
      severity: 'notice',
      rule: 'spf-unknown-client',
      title: 'SPF was not judged',
      detail:
        'The address of the client that handed the message over was not kept (it was caught by an older version).',
    });
  } else if (spfResult === 'fail' || spfResult === 'softfail') {
    findings.push({
      severity: spfResult === 'fail' ? 'error' : 'warning',
      rule: `spf-${spfResult}`,
      title: `SPF ${spfResult}s for ${spfDomain}`,
      detail: `${ip} is not allowed to send for ${spfDomain} by its SPF record${spf?.rr ? ` (${spf.rr})` : ''}.`,
    });
  } else if (spfResult === 'none') {
    findings.push({
      severity: 'warning',
      rule: 'spf-missing',
      title: `No SPF record for ${spfDomain ?? 'the envelope sender'}`,
      detail: spfDomain
        ? `There is no SPF record for ${spfDomain} (the MAIL FROM domain) ${where}.`
        : 'The message has no envelope sender (MAIL FROM:<>) to judge SPF by.',
    });
  } else if (spfResult !== 'pass') {
    findings.push({
      severity: 'warning',
      rule: 'spf-error',
      title: `SPF ${spfResult} for ${spfDomain}`,
      detail: spf ? (spf.status.comment ?? spf.info) : spfResult,
    });
  } else if (!spfAligned && from) {
    findings.push({
      severity: 'notice',
      rule: 'spf-not-aligned',
      title: `SPF passes for ${spfDomain}, not for the From domain`,
      detail: `The envelope sender's domain is not ${org(from)}, so SPF does not count for DMARC.`,
    });
  }

  const d = res.dmarc || null;
  const dmarc = d ? d.status.result : 'none';
  if (!dkimPass.length && spfResult !== 'pass') {
    findings.push({
      severity: 'error',
      rule: 'not-authenticated',
      title: 'Neither SPF nor DKIM passes',
      detail:
        `Receivers take the message as unauthenticated: Gmail rejects such mail (550 5.7.26) and others file it as spam. ` +
        `Sign it with DKIM for ${from ?? 'the From domain'} and publish the records ${where}.`,
    });
  } else if (dmarc === 'fail') {
    findings.push({
      severity: 'error',
      rule: 'dmarc-fail',
      title: `DMARC fails for ${from}`,
      detail:
        `Neither a passing DKIM signature nor SPF is aligned with ${from}; its DMARC policy is ${d?.policy ?? d?.p ?? 'none'}` +
        `${d?.policy === 'reject' ? ': receivers reject the message' : d?.policy === 'quarantine' ? ': receivers file it as spam' : ''}.`,
    });
  }
  if (dmarc === 'none' && from) {
    findings.push({
      severity: 'warning',
      rule: 'dmarc-missing',
      title: `No DMARC record for ${org(from)}`,
      detail: `There is no DMARC record (_dmarc.${org(from)}) ${where}: Gmail and Yahoo require one of bulk senders.`,
    });
  }

  const broken = [spfResult, dmarc, dkim].filter((r) => r === 'temperror' || r === 'temperr');
  if (broken.length === 3) return { skipped: `DNS lookups failed (${dns} DNS): nothing could be judged.` };
  return { skipped: null, results: { spf: ip ? spfResult : 'none', dkim, dmarc }, findings };
}
