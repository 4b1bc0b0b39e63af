import { Argument, Command, InvalidArgumentError } from 'commander';
import { examples, type Runner } from '../../command.js';
import type { Context } from '../../context.js';
import { printJson, printTable, type Column } from '../../output.js';

type ZoneType = 'TXT' | 'CNAME' | 'MX';
type ZoneRecord = { host: string; type: string; values: string[]; state: string };

export interface SandboxDnsPublishOptions {
  domainId: string;
  propagating?: boolean;
}
export interface SandboxDnsSetOptions {
  host: string;
  type: ZoneType;
  values: string[];
  propagating?: boolean;
}
export interface SandboxDnsRemoveOptions {
  host: string;
  type: ZoneType;
}

/** TXT, CNAME or MX, in any case. */
function zoneType(v: string): ZoneType {
  const t = v.toUpperCase();
  if (t !== 'TXT' && t !== 'CNAME' && t !== 'MX') throw new InvalidArgumentError('TYPE is TXT, CNAME or MX.');
  return t;
}

export function sandboxDnsCommand(runner: Runner): Command {
  const publish = new Command('publish')
    .description("Publish a domain's expected records in the sandbox zone, so that `svc domains verify` finds them")
    .argument('<domain-id>', 'the domain id (dom_…)')
    .option('--propagating', 'publish them as still propagating (a check finds them on some resolvers only)')
    .action((domainId: string, o: { propagating?: boolean }, c: Command) =>
      runner(c, sandboxDnsPublishRun, { domainId, propagating: o.propagating }),
    );
  const set = new Command('set')
    .description('Set any record of the sandbox zone (to simulate a mistake: a wrong value, a stray record)')
    .argument('<host>', 'the record name, e.g. _dmarc.example.test')
    .addArgument(new Argument('<type>', 'TXT, CNAME or MX').argParser(zoneType))
    .argument('<value...>', 'one or more values; an MX value is "PRIORITY HOST"')
    .option('--propagating', 'as still propagating')
    .action((host: string, type: ZoneType, values: string[], o: { propagating?: boolean }, c: Command) =>
      runner(c, sandboxDnsSetRun, { host, type, values, propagating: o.propagating }),
    );
  const remove = new Command('remove')
    .description('Remove a record from the sandbox zone (to simulate a removal)')
    .argument('<host>', 'the record name')
    .addArgument(new Argument('<type>', 'TXT, CNAME or MX').argParser(zoneType))
    .action((host: string, type: ZoneType, _o: object, c: Command) => runner(c, sandboxDnsRemoveRun, { host, type }));
  return examples(
    new Command('dns').description('The sandbox DNS zone `svc serve --dns sandbox` answers from'),
    'svc sandbox dns publish dom_…',
  )
    .addCommand(examples(publish, 'svc sandbox dns publish dom_…', 'svc sandbox dns publish dom_… --propagating'))
    .addCommand(
      examples(
        set,
        "svc sandbox dns set _dmarc.example.test TXT 'v=DMARC1; p=reject;'",
        'svc sandbox dns set bounces.example.test MX "10 mx.example.net"',
      ),
    )
    .addCommand(examples(remove, 'svc sandbox dns remove _dmarc.example.test TXT'));
}

const columns: Column<ZoneRecord>[] = [
  { header: 'HOST', value: (r) => r.host },
  { header: 'TYPE', value: (r) => r.type },
  { header: 'VALUES', value: (r) => r.values.join(' | ') },
  { header: 'STATE', value: (r) => r.state },
];

const state = (propagating?: boolean) => (propagating ? ('propagating' as const) : undefined);

export async function sandboxDnsPublishRun(ctx: Context, o: SandboxDnsPublishOptions): Promise<void> {
  const r = await (await ctx.client()).sandbox('publishDomain', {
    params: { id: o.domainId },
    body: { state: state(o.propagating) },
  });
  if (ctx.json) return printJson(ctx.io, r.raw);
  await printTable(ctx.io, r.body.records, columns);
  ctx.io.info(
    `Published ${r.body.records.length} record${r.body.records.length === 1 ? '' : 's'}; check them with: svc domains verify ${o.domainId}`,
  );
}

export async function sandboxDnsSetRun(ctx: Context, o: SandboxDnsSetOptions): Promise<void> {
  const r = await (await ctx.client()).sandbox('putDns', {
    body: { host: o.host, type: o.type, values: o.values, state: state(o.propagating) },
  });
  if (ctx.json) return printJson(ctx.io, r.raw);
  await printTable(ctx.io, [r.body], columns);
}

export async function sandboxDnsRemoveRun(ctx: Context, o: SandboxDnsRemoveOptions): Promise<void> {
  await (await ctx.client()).sandbox('deleteDns', { query: { host: o.host, type: o.type } });
  ctx.io.info(`Removed ${o.type} ${o.host} from the sandbox zone.`);
}
