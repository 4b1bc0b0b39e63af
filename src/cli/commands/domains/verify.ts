import { Command } from 'commander';
import type { VerifiedDomain } from '../../../contract/domains.js';
import { duration, examples, humanDuration, type Runner } from '../../command.js';
import type { Context } from '../../context.js';
import { CommandError, UsageError } from '../../errors.js';
import { printJson, printTable } from '../../output.js';
import { findingColumns } from './shared.js';

export interface DomainsVerifyOptions {
  id: string;
  wait?: boolean;
  /** Milliseconds. */
  timeout?: number;
}

export const DEFAULT_VERIFY_TIMEOUT_MS = 10 * 60_000;

export function domainsVerifyCommand(runner: Runner): Command {
  const cmd = new Command('verify')
    .description('Look the domain\'s records up now and print what was found; --wait checks again until it is verified')
    .argument('<id>', 'the domain id (dom_…)')
    .option('--wait', 'check again, less and less often, until verified or --timeout')
    .option('--timeout <duration>', 'with --wait: give up after this long (default 10m)', duration('--timeout'))
    .action((id: string, o: { wait?: boolean; timeout?: number }, c: Command) => {
      if (o.timeout !== undefined && !o.wait) throw new UsageError('--timeout goes with --wait');
      return runner(c, domainsVerifyRun, { id, wait: o.wait, timeout: o.timeout });
    });
  return examples(cmd, 'svc domains verify dom_…', 'svc domains verify dom_… --wait --timeout 30m');
}

/**
 * Seconds between checks while waiting: the service allows 6 checks a minute per domain, and records that are not
 * there after a minute usually take many more to appear.
 */
const RECHECK_SECONDS = [5, 10, 15, 30];

export async function domainsVerifyRun(ctx: Context, o: DomainsVerifyOptions): Promise<void> {
  const { io, clock } = ctx;
  const client = await ctx.client();
  const timeout = o.timeout ?? DEFAULT_VERIFY_TIMEOUT_MS;
  const deadline = clock.now() + timeout;
  const spinner = await io.spinner(`Checking the records of ${o.id}…`);
  let r;
  try {
    for (let attempt = 0; ; attempt++) {
      r = await client.call('verifyDomain', { params: { id: o.id } });
      if (!o.wait || r.body.verified || clock.now() >= deadline) break;
      const pause = Math.min(RECHECK_SECONDS[Math.min(attempt, RECHECK_SECONDS.length - 1)]! * 1000, deadline - clock.now());
      spinner.update(`${r.body.name}: ${summary(r.body)}; checking again in ${humanDuration(pause)}`);
      await clock.sleep(pause);
    }
  } finally {
    spinner.stop();
  }
  const d: VerifiedDomain = r.body;
  if (ctx.json) printJson(io, r.raw);
  else await printTable(io, d.findings, findingColumns);
  if (d.verified) {
    io.info(`${io.err.green('✓')} ${d.name} is verified.`);
    return;
  }
  if (o.wait) {
    throw new CommandError(
      `${d.name} is not verified after ${humanDuration(timeout)} (${summary(d)})`,
      'publish the records of `svc domains dns ' + d.id + '` exactly, then run this again with a longer --timeout',
      ctx.json,
    );
  }
  io.info(`${d.name} is not verified yet: ${summary(d)}. Wait for it with: svc domains verify ${d.id} --wait`);
}

function summary(d: VerifiedDomain): string {
  if (d.propagating) return 'published, still propagating';
  const bad = d.findings.filter((f) => f.required && f.status !== 'ok');
  return bad.length ? `${bad.length} required record${bad.length === 1 ? '' : 's'} missing or wrong` : d.status;
}
