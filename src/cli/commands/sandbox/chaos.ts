import { Command, InvalidArgumentError, Option } from 'commander';
import {
  CHAOS_MAX_DELAY_MS,
  CHAOS_MAX_RETRY_AFTER_S,
  CHAOS_MAX_SEED,
  CHAOS_MAX_TIMES,
  SMTP_STAGES,
  type SmtpStage,
} from '../../../contract/chaos-bounds.js';
import type { ChaosRule, ChaosState, ListedChaosRule } from '../../../contract/chaos.js';
import { examples, int, type Runner } from '../../command.js';
import type { Context } from '../../context.js';
import { UsageError } from '../../errors.js';
import { printJson, printTable, type Column } from '../../output.js';

/** One rule, as the flags of `svc sandbox chaos set` describe it. */
export interface SandboxChaosSetOptions {
  method?: string;
  path?: string;
  smtp?: SmtpStage;
  status?: number;
  retryAfter?: number;
  delay?: number;
  reset?: boolean;
  code?: number;
  message?: string;
  times?: number;
  probability?: number;
  seed?: number;
}

/** A number from 0 to 1. */
function probability(v: string): number {
  const n = Number(v);
  if (v.trim() === '' || !Number.isFinite(n) || n < 0 || n > 1)
    throw new InvalidArgumentError('--probability takes a number from 0 to 1, e.g. 0.25.');
  return n;
}

const ACTIONS = ['status', 'delay', 'reset', 'code'] as const;

export function sandboxChaosCommand(runner: Runner): Command {
  const set = new Command('set')
    .description(
      'Fail /v1 requests or SMTP stages of the sink on purpose: REPLACES the rules with the one these flags describe',
    )
    .option('--method <method>', 'only requests with this method (GET, POST, PUT, PATCH, DELETE); default any')
    .option('--path <path>', 'only this /v1 path, {name} standing for one segment: /v1/emails, /v1/emails/{id}')
    .addOption(
      new Option('--smtp <stage>', "a stage of the SMTP sink's sessions instead of /v1 requests")
        .choices(SMTP_STAGES)
        .conflicts(['method', 'path']),
    )
    .addOption(
      new Option('--status <status>', 'answer with a Problem of this HTTP status (400-599)')
        .argParser(int('--status', 400, 599))
        .conflicts(['delay', 'reset', 'code', 'smtp']),
    )
    .addOption(
      new Option('--retry-after <seconds>', 'with --status: the Retry-After it sends (1 on 429 and 503 by default)')
        .argParser(int('--retry-after', 0, CHAOS_MAX_RETRY_AFTER_S))
        .conflicts(['delay', 'reset', 'code', 'smtp']),
    )
    .addOption(
      new Option('--delay <ms>', 'hold the request this many milliseconds, then handle it as usual')
        .argParser(int('--delay', 0, CHAOS_MAX_DELAY_MS))
        .conflicts(['reset', 'code', 'smtp']),
    )
    .addOption(new Option('--reset', 'drop the connection without an answer').conflicts(['code', 'smtp']))
    .addOption(
      new Option('--code <code>', 'with --smtp: answer that stage with this SMTP reply code (400-599)')
        .argParser(int('--code', 400, 599))
        .conflicts(['method', 'path']),
    )
    .option('--message <text>', 'with --code: the text of the reply')
    .option(
      '--times <n>',
      'apply to the next N matches only, then retire (default: every match)',
      int('--times', 1, CHAOS_MAX_TIMES),
    )
    .option('--probability <p>', 'apply to a match with this chance, 0 to 1, drawn from the seed', probability)
    .option(
      '--seed <n>',
      'seed the draws, so that a run fails the same way again (default: a random one)',
      int('--seed', 0, CHAOS_MAX_SEED),
    )
    .action((o: SandboxChaosSetOptions, c: Command) =>
      runner(c, sandboxChaosSetRun, {
        method: o.method,
        path: o.path,
        smtp: o.smtp,
        status: o.status,
        retryAfter: o.retryAfter,
        delay: o.delay,
        reset: o.reset,
        code: o.code,
        message: o.message,
        times: o.times,
        probability: o.probability,
        seed: o.seed,
      }),
    );
  const list = new Command('list')
    .description('Show the chaos rules in force (index, match, action, how many more times) and the seed')
    .action((_o: object, c: Command) => runner(c, sandboxChaosListRun, {}));
  const clear = new Command('clear')
    .description('Remove every chaos rule: requests and SMTP sessions are handled as usual again')
    .action((_o: object, c: Command) => runner(c, sandboxChaosClearRun, {}));
  return examples(
    new Command('chaos').description(
      "Failures on purpose: a local server's /v1 routes and SMTP sink refuse, delay or drop what a rule matches",
    ),
    'svc sandbox chaos set --path /v1/emails --method POST --status 503 --times 2',
    'svc sandbox chaos list',
  )
    .addCommand(
      examples(
        set,
        'svc sandbox chaos set --path /v1/emails --method POST --status 503 --times 2',
        'svc sandbox chaos set --path /v1/emails --status 429 --retry-after 7',
        'svc sandbox chaos set --path /v1/emails/{id} --delay 2000 --probability 0.5 --seed 42',
        'svc sandbox chaos set --smtp rcpt --code 451 --message "Greylisted, come back later" --times 1',
      ),
    )
    .addCommand(examples(list, 'svc sandbox chaos list', 'svc sandbox chaos list --json'))
    .addCommand(examples(clear, 'svc sandbox chaos clear'));
}

/** The rule the flags describe; a combination the server would refuse is a usage error here, in terms of flags. */
export function ruleOf(o: SandboxChaosSetOptions): ChaosRule {
  const given = ACTIONS.filter((k) => o[k] !== undefined && o[k] !== false);
  if (given.length === 0) {
    throw new UsageError(
      o.smtp ? 'say how the stage is answered: --code' : 'say what the rule does: --status, --delay or --reset',
      'e.g. svc sandbox chaos set --path /v1/emails --status 503 --times 2',
    );
  }
  if (given.length > 1) throw new UsageError(`give one action: --${given.join(' and --')} cannot go together`);
  if (o.smtp && o.code === undefined) {
    throw new UsageError('an SMTP stage is answered with --code (e.g. --smtp rcpt --code 451)');
  }
  if (!o.smtp && o.code !== undefined) {
    throw new UsageError('--code answers a stage of the SMTP sink: give --smtp connect|mail|rcpt|data');
  }
  if (o.retryAfter !== undefined && o.status === undefined) throw new UsageError('--retry-after goes with --status');
  if (o.message !== undefined && o.code === undefined) throw new UsageError('--message goes with --code');
  const action: ChaosRule['action'] =
    o.code !== undefined
      ? { code: o.code, ...(o.message !== undefined ? { message: o.message } : {}) }
      : o.status !== undefined
        ? { status: o.status, ...(o.retryAfter !== undefined ? { retry_after: o.retryAfter } : {}) }
        : o.delay !== undefined
          ? { delay_ms: o.delay }
          : { reset: true };
  return {
    match: o.smtp
      ? { smtp: o.smtp }
      : { ...(o.method !== undefined ? { method: o.method } : {}), ...(o.path !== undefined ? { path: o.path } : {}) },
    action,
    ...(o.times !== undefined ? { times: o.times } : {}),
    ...(o.probability !== undefined ? { probability: o.probability } : {}),
  };
}

/** `POST /v1/emails`, `any /v1/emails/{id}`, `POST any /v1 path`, `smtp rcpt`. */
export function matchText(m: ListedChaosRule['match']): string {
  if (m.smtp) return `smtp ${m.smtp}`;
  if (m.path) return `${m.method ?? 'any'} ${m.path}`;
  return m.method ? `${m.method} any /v1 path` : 'any /v1 request';
}

/** `503`, `429 Retry-After 7`, `delay 2000 ms`, `reset`, `451 Greylisted`. */
export function actionText(a: ListedChaosRule['action']): string {
  if (a.code !== undefined) return a.message ? `${a.code} ${a.message}` : String(a.code);
  if (a.status !== undefined)
    return a.retry_after !== undefined ? `${a.status} Retry-After ${a.retry_after}` : String(a.status);
  if (a.delay_ms !== undefined) return `delay ${a.delay_ms} ms`;
  return 'reset';
}

const columns: Column<ListedChaosRule & { index: number }>[] = [
  { header: 'INDEX', value: (r) => r.index },
  { header: 'MATCH', value: (r) => matchText(r.match) },
  { header: 'ACTION', value: (r) => actionText(r.action) },
  { header: 'PROBABILITY', value: (r) => r.probability },
  { header: 'REMAINING', value: (r) => (r.remaining === null ? 'no limit' : r.remaining) },
];

async function printRules(ctx: Context, state: ChaosState): Promise<void> {
  const { io } = ctx;
  await printTable(
    io,
    state.rules.map((r, index) => ({ ...r, index })),
    columns,
  );
}

export async function sandboxChaosSetRun(ctx: Context, o: SandboxChaosSetOptions): Promise<void> {
  const rule = ruleOf(o);
  const r = await (await ctx.client()).sandbox('setChaos', {
    body: { rules: [rule], ...(o.seed !== undefined ? { seed: o.seed } : {}) },
  });
  if (ctx.json) return printJson(ctx.io, r.raw);
  await printRules(ctx, r.body);
  ctx.io.info(
    `Chaos rule 0 set (seed ${r.body.seed}), in place of any rules before; answers it gives carry Svc-Chaos: 0. ` +
      'Remove it with: svc sandbox chaos clear',
  );
}

export async function sandboxChaosListRun(ctx: Context, _o: object): Promise<void> {
  const r = await (await ctx.client()).sandbox('getChaos');
  if (ctx.json) return printJson(ctx.io, r.raw);
  if (r.body.rules.length === 0) {
    if (ctx.io.stdoutIsTTY) {
      ctx.io.info(
        'No chaos rules: every request is handled as usual. Add one with: svc sandbox chaos set --path /v1/emails --status 503 --times 2',
      );
    }
    return;
  }
  await printRules(ctx, r.body);
  if (ctx.io.stdoutIsTTY) ctx.io.info(`Seed ${r.body.seed}.`);
}

export async function sandboxChaosClearRun(ctx: Context, _o: object): Promise<void> {
  await (await ctx.client()).sandbox('clearChaos');
  ctx.io.info('Chaos rules cleared: requests and SMTP sessions are handled as usual.');
}
