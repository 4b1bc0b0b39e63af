// A relay rule's job (`svc serve --relay-matching`, core/relay.ts): passes one caught message, its bytes as caught, to
// its matching recipients through the relay. A relay out of reach or answering 4xx defers it to the job's next attempt
// on the service's one retry policy (core/rules/retry-policy.ts); a 5xx is final. Each outcome joins the message's
// timeline.
import { iso } from '../../lib/clock.js';
import type { Relay, RelayError, RelayTransport } from '../core/relay.js';
import { RELAY_ENTRY } from '../core/relay.js';
import type { JobPayloads } from '../core/rules/job-kinds.js';
import { handOverFailure, JOB_MAX_ATTEMPTS, jobRetryDelay } from '../core/rules/retry-policy.js';
import type { JobHandler } from '../core/scheduler.js';

export function relayWorker(
  relay: Relay,
  transport: RelayTransport | null,
  now: () => number,
): JobHandler<JobPayloads['relay']> {
  return {
    async run({ caught_id, to }, job) {
      // A job written under a relay that a later start no longer has (or a message deleted since): nothing to do.
      const mail = transport && relay.relayMail(caught_id, to);
      if (!mail || !transport) return;
      const base = { to, mail_from: mail.envelope.from, attempt: job.attempts };
      let response: string;
      try {
        response = await transport.send(mail);
      } catch (err) {
        const e = err as RelayError;
        const reply = relay.reason(e);
        const code = e.responseCode ? { smtp_code: e.responseCode } : {};
        if (handOverFailure(e.responseCode, false) === 'final') {
          await relay.record(caught_id, RELAY_ENTRY.refused, { ...base, ...code, response: reply });
          return;
        }
        const delay = jobRetryDelay(job.attempts);
        if (delay !== null) {
          await relay.record(caught_id, RELAY_ENTRY.deferred, {
            ...base,
            ...code,
            response: reply,
            next_attempt_at: iso(now() + delay),
          });
        }
        // The scheduler tries it again after `delay` (or, after the last attempt, runs `exhausted`).
        throw Object.assign(new Error(`the relay ${e.responseCode ? 'answered' : 'could not be reached:'} ${reply}`), {
          reply,
        });
      }
      await relay.record(caught_id, RELAY_ENTRY.relayed, { ...base, response });
    },
    async exhausted({ caught_id, to }, err) {
      await relay.record(caught_id, RELAY_ENTRY.failed, {
        to,
        response: (err as { reply?: string }).reply ?? String(err),
        reason: `The relay was tried ${JOB_MAX_ATTEMPTS} times without success.`,
      });
    },
  };
}
