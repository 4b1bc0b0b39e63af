import { Command, Option } from 'commander';
import type { CheckFinding, CheckId, MessageCheck, MessageChecks } from '../../../contract/checks.js';
import { SEVERITIES, type Severity, findingsAtOrAbove } from '../../../contract/severity.js';
import { examples, type Runner } from '../../command.js';
import type { Context } from '../../context.js';
import { CommandError } from '../../errors.js';
import type { IO } from '../../io.js';
import { type Column, printJson, printTable } from '../../output.js';

export interface InboxCheckOptions {
  id: string;
  /** Exit 1 when a finding of this severity or a worse one exists (default `error`). */
  failOn?: Severity;
  refreshLinks?: boolean;
}

export function inboxCheckCommand(runner: Runner): Command {
  const cmd = new Command('check')
    .description(
      "Check a caught message: will it render in mail clients, do its links work, would it pass receivers' " +
        'authentication, is its content sound; exit 1 on findings at or above --fail-on',
    )
    .argument('<id>', 'the caught message id (eml_…), or the id `svc emails send` printed (msg_…)')
    .addOption(
      new Option('--fail-on <severity>', 'exit 1 when a finding this bad or worse exists (default error)').choices([
        ...SEVERITIES,
      ]),
    )
    .option('--refresh-links', 'check the links again rather than show the kept result')
    .action((id: string, o: { failOn?: Severity; refreshLinks?: boolean }, c: Command) =>
      runner(c, inboxCheckRun, { id, failOn: o.failOn, refreshLinks: o.refreshLinks }),
    );
  return examples(
    cmd,
    'svc inbox check eml_…',
    'svc inbox check eml_… --fail-on warning',
    'svc inbox check eml_… --json | jq \'.checks[] | select(.id == "links") | .links\'',
  );
}

type Row = CheckFinding & { check: CheckId };

const columns: Column<Row>[] = [
  { header: 'SEVERITY', value: (f) => f.severity },
  { header: 'CHECK', value: (f) => f.check },
  { header: 'RULE', value: (f) => f.rule },
  { header: 'WHERE', value: (f) => (f.line !== undefined ? `${f.line}:${f.column ?? 1}` : null) },
  { header: 'FINDING', value: (f) => (f.url ? `${f.title}: ${f.url}` : f.title) },
  { header: 'DETAIL', value: (f) => f.detail },
];

/**
 * A check that could not run, as a piped line beside the findings: `skipped` where a finding has its severity (so a
 * script tells them apart), the check, and why in the place of a finding's title.
 */
const skippedColumns: Column<MessageCheck>[] = [
  { header: 'SEVERITY', value: () => 'skipped' },
  { header: 'CHECK', value: (c) => c.id },
  { header: 'RULE', value: () => null },
  { header: 'WHERE', value: () => null },
  { header: 'FINDING', value: (c) => c.reason },
  { header: 'DETAIL', value: () => null },
];

/** The summary in one line: `2 errors, 5 warnings, 3 notices; HTML compatibility 87/100`. */
function summaryLine(r: MessageChecks): string {
  const n = (count: number, word: string) => `${count} ${word}${count === 1 ? '' : 's'}`;
  const { errors, warnings, notices, score } = r.summary;
  return `${n(errors, 'error')}, ${n(warnings, 'warning')}, ${n(notices, 'notice')}${score === null ? '' : `; HTML compatibility ${score}/100`}`;
}

/** Each check's status on a line of its own, with what it measured or why it was skipped. */
function printChecks(io: IO, r: MessageChecks): void {
  const colour = {
    ok: io.out.green,
    error: io.out.red,
    warning: io.out.yellow,
    notice: io.out.cyan,
    skipped: io.out.dim,
  };
  const width = Math.max(...r.checks.map((c) => c.id.length));
  for (const c of r.checks) {
    const about =
      c.status === 'skipped'
        ? c.reason
        : c.id === 'html-compatibility'
          ? `score ${c.score}/100`
          : c.id === 'authentication' && c.results
            ? `spf ${c.results.spf}, dkim ${c.results.dkim}, dmarc ${c.results.dmarc}`
            : c.id === 'spam'
              ? `${c.spam_score} points of ${c.spam_threshold}`
              : c.id === 'links'
                ? `${c.links?.length ?? 0} URLs`
                : '';
    io.print(`${c.id.padEnd(width)}  ${colour[c.status](c.status.padEnd(7))}  ${io.out.dim(about ?? '')}`.trimEnd());
  }
}

/**
 * Prints a caught message's checks (GET /sandbox/messages/{id}/checks): on a terminal the summary, each check and a
 * table of the findings; piped, the checks skipped and the findings as tab-separated lines (the summary on stderr);
 * `--json` the report.
 */
export async function inboxCheckRun(ctx: Context, o: InboxCheckOptions): Promise<void> {
  const { io } = ctx;
  const client = await ctx.client();
  const r = await client.sandbox('getMessageChecks', {
    params: { id: o.id },
    query: o.refreshLinks ? { refresh: 'links' } : {},
  });
  const report = r.body;
  const findings = report.checks.flatMap((c) => c.findings.map((f) => ({ ...f, check: c.id })));
  if (ctx.json) printJson(io, r.raw);
  else if (io.stdoutIsTTY) {
    io.print(`${io.out.bold(report.message_id)}  ${summaryLine(report)}`);
    io.print('');
    printChecks(io, report);
    if (findings.length) {
      io.print('');
      await printTable(io, findings, columns);
    }
  } else {
    io.info(`${report.message_id}: ${summaryLine(report)}`);
    await printTable(
      io,
      report.checks.filter((c) => c.status === 'skipped'),
      skippedColumns,
    );
    await printTable(io, findings, columns);
  }
  const failOn = o.failOn ?? 'error';
  const failing = findingsAtOrAbove(report, failOn);
  if (failing.length) {
    throw new CommandError(
      `${report.message_id} has ${failing.length} finding${failing.length === 1 ? '' : 's'} at or above ${failOn} (--fail-on ${failOn})`,
      failOn === 'error' ? undefined : 'a higher --fail-on (error) lets warnings and notices pass',
      ctx.json,
    );
  }
}
