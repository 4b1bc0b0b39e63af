import { Command } from 'commander';
import type { VerifiedDomain } from '../../../contract/domains.js';
import { duration, examples, humanDuration, type Runner } from '../../command.js';
import type { Context } from '../../context.js';
import { CommandError, UsageError } from '../../errors.js';
import { printJson, printTable } from '../../output.js';
import { DOMAIN_ARGUMENT, findDomain, findingColumns, sandboxZoneNote } from './shared.js';

export interface DomainsVerifyOptions {
  /** A name or an id. */
  domain: string;
  /** On a local server: publish the expected records in its sandbox zone first. */
  publish?: boolean;
  wait?: boolean;
  /** Milliseconds. */
  timeout?: number;
}

export const DEFAULT_VERIFY_TIMEOUT_MS = 10 * 60_000;

export function domainsVerifyCommand(runner: Runner): Command {
  const cmd = new Command('verify')
    .description(
      "Look the domain's records up now and print what was found, exit 1 unless it is verified; --wait checks again " +
        'until it is verified',
    )
    .argument(...DOMAIN_ARGUMENT)
    .option('--wait', 'check again, less and less often, until verified or --timeout')
    .option('--timeout <duration>', 'with --wait: give up after this long (default 10m)', duration('--timeout'))
    .option('--publish', 'on a local svc serve only: publish the records in its sandbox zone first, then verify')
    .action((domain: string, o: { wait?: boolean; timeout?: number; publish?: boolean }, c: Command) => {
      if (o.timeout !== undefined && !o.wait) throw new UsageError('--timeout goes with --wait');
      return runner(c, domainsVerifyRun, { domain, publish: o.publish, wait: o.wait, timeout: o.timeout });
    });
  return examples(
    cmd,
    'svc domains verify example.com',
    'svc domains verify dom_… --wait --timeout 30m',
    'svc domains verify dom_… --publish   # a local svc serve',
  );
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
  const { id } = await findDomain(ctx, o.domain);
  if (o.publish) await publish(ctx, id);
  const deadline = clock.now() + timeout;
  let spinner = await io.spinner(`Checking the records of ${o.domain}…`);
  let r;
  try {
    for (let attempt = 0; ; attempt++) {
      r = await client.call('verifyDomain', { params: { id } });
      if (!o.wait || r.body.verified || clock.now() >= deadline) break;
      if (attempt === 0 && !o.publish && r.headers.sandbox && wrong(r.body).length) {
        // Nothing will appear by itself in a sandbox's zone: say so now rather than after the whole --timeout.
        spinner.stop();
        io.info(
          `${io.err.yellow('note:')} ${sandboxZoneNote(id)}; still waiting (or stop and run \`svc domains verify ${o.domain} --publish --wait\`)`,
        );
        spinner = await io.spinner(`Checking the records of ${o.domain}…`);
      }
      const pause = Math.min(
        RECHECK_SECONDS[Math.min(attempt, RECHECK_SECONDS.length - 1)]! * 1000,
        deadline - clock.now(),
      );
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
  const sandbox = r.headers.sandbox && wrong(d).length > 0;
  if (o.wait) {
    throw new CommandError(
      `${d.name} is not verified after ${humanDuration(timeout)} (${summary(d)})`,
      sandbox
        ? `${sandboxZoneNote(d.id)}, or run \`svc domains verify ${d.id} --publish\``
        : `publish the records of \`svc domains dns ${d.id}\` exactly, then run this again with a longer --timeout`,
      ctx.json,
    );
  }
  throw new CommandError(
    `${d.name} is not verified yet (${summary(d)})`,
    sandbox
      ? `${sandboxZoneNote(d.id)} (or \`svc domains verify ${d.id} --publish\`)`
      : `publish the records of \`svc domains dns ${d.id}\`, then wait for them with \`svc domains verify ${d.id} --wait\``,
    ctx.json,
  );
}

/**
 * `--publish`: only a local server has a sandbox zone to publish in. Asking for the domain first tells one (and its
 * answer says so) without spending one of the six checks a minute a domain is allowed.
 */
async function publish(ctx: Context, id: string): Promise<void> {
  const client = await ctx.client();
  const domain = await client.call('getDomain', { params: { id } });
  if (!domain.headers.sandbox) {
    throw new UsageError(
      `--publish writes the records into the DNS zone of a local svc serve, and ${client.baseUrl} is not one`,
      `publish the records of \`svc domains dns ${id}\` at your DNS host, then \`svc domains verify ${id} --wait\``,
    );
  }
  const r = await client.sandbox('publishDomain', { params: { id }, body: {} });
  ctx.io.info(
    `Published ${r.body.records.length} record${r.body.records.length === 1 ? '' : 's'} of ${domain.body.name} in the sandbox zone.`,
  );
}

/** The required records not found as expected. */
function wrong(d: VerifiedDomain) {
  return d.findings.filter((f) => f.required && f.status !== 'ok' && f.status !== 'propagating');
}

function summary(d: VerifiedDomain): string {
  if (d.propagating) return 'published, still propagating';
  const bad = d.findings.filter((f) => f.required && f.status !== 'ok');
  return bad.length ? `${bad.length} required record${bad.length === 1 ? '' : 's'} missing or wrong` : d.status;
}
