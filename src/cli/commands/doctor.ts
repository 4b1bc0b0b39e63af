import { Command } from 'commander';
import { apiKey } from '../api-key.js';
import { examples, type Runner } from '../command.js';
import type { BaseUrl, Context } from '../context.js';
import { CommandError } from '../errors.js';
import { printJson } from '../output.js';
import { profileSession } from '../profile-session.js';

export interface Check {
  name: string;
  /** `warn`: it works in part (a key the service knows that may not do everything); only `fail` fails the run. */
  status: 'ok' | 'warn' | 'fail' | 'skip';
  detail: string;
}

/** Further than this from the service's clock, token lifetimes and webhook signatures (300 s) go wrong. */
const MAX_SKEW_S = 60;

export function doctorCommand(runner: Runner): Command {
  const cmd = new Command('doctor')
    .description('Check the setup: service reachable, its version, credential store, session and key, clock skew')
    .action((_o: object, c: Command) => runner(c, doctorRun, {}));
  return examples(
    cmd,
    'svc doctor',
    'svc doctor --profile staging',
    'svc doctor --json | jq \'.checks[] | select(.status == "fail")\'',
  );
}

/** A local server's /readyz: ok, or what it says is wrong (a full disk, still starting, shutting down). */
async function readiness(baseUrl: string): Promise<[Check['status'], string]> {
  const url = new URL('/readyz', baseUrl).href;
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(5_000) });
    const body = (await res.json().catch(() => ({}))) as { detail?: string };
    if (res.ok) return ['ok', `ready (${url})`];
    return ['fail', `${body.detail ?? `${url} answered ${res.status}`}`];
  } catch (err) {
    return ['fail', `${url}: ${(err as Error).message}`];
  }
}

export async function doctorRun(ctx: Context): Promise<void> {
  const checks: Check[] = [];
  const add = (name: string, status: Check['status'], detail: string) => checks.push({ name, status, detail });
  const { ApiError, SERVICE_VERSION, createClient } = await import('../../client/index.js');
  // The base URL itself may not be known: no URL given, nothing on the default port, and several servers running.
  const base = await ctx.baseUrl().catch((err: Error) => err);
  const url = base instanceof Error ? undefined : base.url;

  let reachable = false;
  try {
    if (base instanceof Error) throw base;
    const client = await ctx.client();
    const sent = ctx.clock.now();
    const r = await client.call('getOpenApi');
    const received = ctx.clock.now();
    reachable = true;
    add('base url', 'ok', `${url} answered in ${received - sent} ms (from ${sourceOf(ctx, base)})`);
    // A local server (it says so in every answer) tells its health itself: /readyz names what is wrong.
    const { isSandbox } = await import('../../contract/sandbox-headers.js');
    if (isSandbox(r.headers)) add('server health', ...(await readiness(url!)));
    const version = r.headers.get('service-version');
    add(
      'service version',
      version === SERVICE_VERSION ? 'ok' : 'fail',
      version === SERVICE_VERSION
        ? version
        : `answered ${version ?? 'no Service-Version header'}; this svc speaks ${SERVICE_VERSION}`,
    );
    const date = Date.parse(r.headers.get('date') ?? '');
    if (Number.isNaN(date)) add('clock skew', 'skip', 'the service sent no Date header');
    else add('clock skew', ...clockSkew(sent, received, date));
  } catch (err) {
    add('base url', 'fail', (err as Error).message);
  }

  await localServerChecks(ctx, url, add);

  const where = await ctx.credentials().where();
  add(
    'credential store',
    'ok',
    where.kind === 'keychain' ? where.location : `file ${where.location} (${where.reason})`,
  );

  // Without a base URL (several servers running, none on the default port) no profile credential applies.
  const session = await profileSession(ctx)
    .current()
    .catch(() => undefined);
  const runKey = apiKey(ctx);
  const key = await runKey.get().catch(() => undefined);
  if (!reachable) {
    add('session', 'skip', 'the service is not reachable');
  } else if (session) {
    try {
      const me = await (await ctx.client()).call('getMe');
      const w = me.body.workspace;
      if (w) add('session', 'ok', `signed in as ${me.body.user.email}, workspace ${w.name} (${w.role})`);
      else
        add(
          'session',
          'warn',
          `signed in as ${me.body.user.email}, but no workspace is chosen: \`svc login --workspace ID_OR_SLUG\``,
        );
    } catch (err) {
      add('session', 'fail', `${(err as Error).message}; sign in again with \`svc login\``);
    }
  } else {
    add(
      'session',
      key ? 'skip' : 'fail',
      key
        ? 'not signed in (an API key is set)'
        : `not signed in to ${url}: \`svc login\`, or give an API key (SVC_API_KEY)`,
    );
  }
  if (reachable && key) {
    const source = await runKey.source();
    const from = source === 'flag' ? '--api-key' : source === 'env' ? 'SVC_API_KEY' : `saved in profile ${ctx.profile}`;
    try {
      await runKey.checked();
      await createClient({ baseUrl: url!, token: key, retries: 0 }).call('listDomains', { query: { limit: 1 } });
      add('api key', 'ok', `${key.slice(0, 13)}… (${from}) is valid`);
    } catch (err) {
      const e = err as Error & { hint?: string };
      // Refused before it was sent: not an svc key at all.
      if (e.hint !== undefined && !(err instanceof ApiError)) add('api key', 'fail', `${e.message}; ${e.hint}`);
      // 403: the service knows the key (a scope or an address rule refused this one call).
      else if (err instanceof ApiError && err.status === 403)
        add(
          'api key',
          'warn',
          `${key.slice(0, 13)}… (${from}) is valid, but was refused reading domains: ${e.message}`,
        );
      else add('api key', 'fail', `${key.slice(0, 13)}… (${from}): ${e.message}`);
    }
  } else if (!key) {
    add('api key', 'skip', 'none given (--api-key, SVC_API_KEY, or `svc keys create … --save`)');
  }

  const failed = checks.filter((c) => c.status === 'fail');
  if (ctx.json) printJson(ctx.io, { ok: failed.length === 0, checks });
  else printChecks(ctx, checks);
  if (failed.length)
    throw new CommandError(
      `${failed.length} check${failed.length === 1 ? '' : 's'} failed: ${failed.map((c) => c.name).join(', ')}`,
      undefined,
      ctx.json,
    );
}

/**
 * How far this machine's clock is from the service's, from one exchange. The service read its clock at a moment between
 * `sent` and `received` by this one, and its Date header has whole seconds: that reading was in [date, date + 1 s).
 * When an offset of zero fits both, the clocks are in step, as a server on this machine always is, however late in a
 * second it answered; otherwise the middle of the offsets that fit is the estimate.
 */
function clockSkew(sent: number, received: number, date: number): [Check['status'], string] {
  const least = sent - (date + 1000);
  const most = received - date;
  const rtt = received - sent;
  if (least < 0 && most >= 0) {
    return ['ok', `in step with the service (within its Date header's whole second and the ${rtt} ms round trip)`];
  }
  const skew = Math.round((least + most) / 2 / 1000);
  const far = Math.abs(skew) > MAX_SKEW_S;
  return [
    far ? 'fail' : 'ok',
    `this machine is ${Math.abs(skew)} s ${skew > 0 ? 'ahead of' : 'behind'} the service${far ? '; sync its clock (NTP)' : ''}`,
  ];
}

/** Where the base URL came from, in words. */
function sourceOf(ctx: Context, base: BaseUrl): string {
  switch (base.source) {
    case 'flag':
      return '--base-url';
    case 'env':
      return 'SVC_BASE_URL';
    case 'profile':
      return `profile ${ctx.profile}`;
    case 'local':
      return `the one svc serve running, pid ${base.server!.pid}: nothing answers at the default address`;
    default:
      return 'the default';
  }
}

/** One line per `svc serve` running on this machine (`svc servers`), the one the base URL reaches marked. */
async function localServerChecks(ctx: Context, url: string | undefined, add: (...c: Parameters<Add>) => void) {
  const { describeLocalServer, localServers, portOf, reachableAt } = await import('../../lib/local-servers.js');
  const { isLoopbackHost, parseBaseUrl } = await import('../../client/base-url.js');
  const running = localServers(ctx.io.env);
  if (running.length === 0) return add('local servers', 'skip', 'no svc serve is running on this machine');
  const target = url ? parseBaseUrl(url) : undefined;
  const here = target && isLoopbackHost(target.hostname) ? portOf(url) : undefined;
  for (const s of running) {
    const api = reachableAt(s.api);
    const used = here !== undefined && portOf(api) === here;
    add('local server', 'ok', `${api} (${describeLocalServer(s)})${used ? ', the base URL' : ''}`);
  }
}

type Add = (name: string, status: Check['status'], detail: string) => void;

function printChecks(ctx: Context, checks: Check[]): void {
  const { io } = ctx;
  if (!io.stdoutIsTTY) {
    for (const c of checks) io.print([c.name, c.status, c.detail].join('\t'));
    return;
  }
  const width = Math.max(...checks.map((c) => c.name.length));
  const mark = { ok: io.out.green('✓'), warn: io.out.yellow('!'), fail: io.out.red('✗'), skip: io.out.dim('-') };
  for (const c of checks)
    io.print(`${mark[c.status]} ${c.name.padEnd(width)}  ${c.status === 'skip' ? io.out.dim(c.detail) : c.detail}`);
}
