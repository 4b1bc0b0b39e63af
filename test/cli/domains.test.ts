// domains add | list | get | dns | update | delete | verify against the real server; the sandbox zone publishes the
// records a test wants found, and `verify --wait` waits on a clock the test moves.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listOf } from '../../src/contract/common.js';
import { Domain, DomainDns, UpdatedDomain, VerifiedDomain } from '../../src/contract/domains.js';
import { loginRun } from '../../src/cli/commands/auth/login.js';
import { domainsAddRun } from '../../src/cli/commands/domains/add.js';
import { domainsDeleteRun } from '../../src/cli/commands/domains/delete.js';
import { domainsDnsRun } from '../../src/cli/commands/domains/dns.js';
import { domainsGetRun } from '../../src/cli/commands/domains/get.js';
import { domainsListRun } from '../../src/cli/commands/domains/list.js';
import { domainsUpdateRun } from '../../src/cli/commands/domains/update.js';
import { domainsVerifyRun } from '../../src/cli/commands/domains/verify.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { cli, fakeClock, tempDirs } from './helpers.js';

describe('svc domains', () => {
  let s: TestServer;
  let configDir: string;
  const dirs = tempDirs();
  let n = 0;
  beforeAll(async () => {
    s = await startTestServer();
    configDir = dirs.make();
    const c = await cli(s, { configDir, stdin: s.seed!.password });
    expect(await c.run(loginRun, { email: s.seed!.email, passwordStdin: true })).toBe(0);
  });
  afterAll(async () => {
    await s.close();
    dirs.cleanup();
  });

  /** Adds a domain through the command (--json) and returns it. */
  async function add(name = `shop-${++n}.test`): Promise<Domain> {
    const c = await cli(s, { configDir, globals: { json: true } });
    expect(await c.run(domainsAddRun, { name }), c.stderr()).toBe(0);
    return Domain.parse(JSON.parse(c.stdout()));
  }

  it('adds a domain and prints the records to publish: a table on a terminal, tab-separated lines when piped', async () => {
    const tty = await cli(s, { configDir, tty: true, env: { NO_COLOR: '1' } });
    expect(await tty.run(domainsAddRun, { name: 'Books.test' })).toBe(0);
    // A local server says it is one: the records are published in its own zone, by `svc sandbox dns publish`.
    expect(tty.stderr()).toMatch(/Added books\.test \(dom_\w+\), status pending\. Its records:/);
    expect(tty.stderr()).toMatch(
      /Then: svc sandbox dns publish (dom_\w+) && svc domains verify \1\n\(or both at once: svc domains verify \1 --publish\)/,
    );
    expect(tty.stdout()).toMatch(/KIND {2,}TYPE {2,}HOST {2,}VALUE {2,}PRIORITY {2,}REQUIRED/);
    expect(tty.stdout()).toMatch(
      /ownership {2,}TXT {2,}_svc-verification\.books\.test {2,}svc-verification=\S+ {2,}- {2,}yes/,
    );

    const piped = await cli(s, { configDir });
    expect(await piped.run(domainsAddRun, { name: 'piped.test', purpose: ['sending'] })).toBe(0);
    const rows = piped
      .stdout()
      .trimEnd()
      .split('\n')
      .map((l) => l.split('\t'));
    expect(rows.map((r) => r[0])).toEqual(
      expect.arrayContaining(['ownership', 'dkim', 'mail_from_mx', 'mail_from_spf', 'dmarc']),
    );
    expect(rows.find((r) => r[0] === 'mail_from_mx')).toEqual([
      'mail_from_mx',
      'MX',
      'bounces.piped.test',
      expect.any(String),
      '10',
      'yes',
    ]);
    expect(rows.find((r) => r[0] === 'dkim')![3]).toMatch(/^v=DKIM1; k=rsa; p=/);
  });

  it('lists, gets and shows the DNS of a domain, with an API key as well as a session', async () => {
    const d = await add();
    const list = await cli(s, { configDir, globals: { json: true } });
    expect(await list.run(domainsListRun, {})).toBe(0);
    expect(
      listOf(Domain)
        .parse(JSON.parse(list.stdout()))
        .data.map((x) => x.id),
    ).toContain(d.id);

    const keyOnly = await cli(s, { configDir: dirs.make(), env: { SVC_API_KEY: s.seed!.api_key_test } });
    expect(await keyOnly.run(domainsListRun, { limit: 100 })).toBe(0);
    expect(keyOnly.stdout()).toMatch(new RegExp(`^${d.id}\t${d.name}\tpending\tsending\t`, 'm'));

    const get = await cli(s, { configDir });
    expect(await get.run(domainsGetRun, { domain: d.id })).toBe(0);
    expect(get.stdout().split('\n')).toEqual(
      expect.arrayContaining([
        `id\t${d.id}`,
        `name\t${d.name}`,
        'status\tpending',
        `mail from\tbounces.${d.name}`,
        'verified\t-',
      ]),
    );

    const dns = await cli(s, { configDir, globals: { json: true } });
    expect(await dns.run(domainsDnsRun, { domain: d.id })).toBe(0);
    expect(DomainDns.parse(JSON.parse(dns.stdout()))).toMatchObject({
      domain: d.name,
      status: 'pending',
      last_checked_at: null,
    });

    const missing = await cli(s, { configDir });
    expect(await missing.run(domainsGetRun, { domain: 'dom_000000000000000000000000' }, 'svc domains get')).toBe(1);
    expect(missing.stderr()).toMatch(/^error: svc domains get: Not found .*\[not_found, req_\w+\]/);
  });

  it('verifies: prints the findings and says what is missing (exit 1); once the records are published, the domain is verified', async () => {
    const d = await add();
    const first = await cli(s, { configDir });
    expect(await first.run(domainsVerifyRun, { domain: d.id }, 'svc domains verify')).toBe(1);
    const findings = first
      .stdout()
      .trimEnd()
      .split('\n')
      .map((l) => l.split('\t'));
    expect(findings.find((f) => f[0] === 'ownership')).toEqual([
      'ownership',
      'TXT',
      `_svc-verification.${d.name}`,
      'yes',
      'missing',
      expect.any(String),
    ]);
    expect(first.stderr()).toMatch(
      new RegExp(
        `^error: svc domains verify: ${d.name} is not verified yet \\(\\d+ required records missing or wrong\\); hint: this is a local sandbox: ` +
          `nothing is in its DNS zone until you run \`svc sandbox dns publish ${d.id}\` \\(or \`svc domains verify ${d.id} --publish\`\\)\n$`,
      ),
    );

    expect((await s.admin('POST', `/sandbox/domains/${d.id}/publish`, {})).status).toBe(200);
    const second = await cli(s, { configDir, globals: { json: true } });
    expect(await second.run(domainsVerifyRun, { domain: d.id })).toBe(0);
    expect(VerifiedDomain.parse(JSON.parse(second.stdout()))).toMatchObject({ verified: true, status: 'verified' });
    expect(second.stderr()).toContain(`${d.name} is verified`);
  });

  it('waits with --wait: checks again after 5 s, 10 s, … until the records appear', async () => {
    const d = await add();
    const clock = fakeClock(async (ms) => {
      // The records appear during the second pause.
      if (ms === 10_000) await s.admin('POST', `/sandbox/domains/${d.id}/publish`, {});
    });
    const c = await cli(s, { configDir, clock });
    expect(await c.run(domainsVerifyRun, { domain: d.id, wait: true })).toBe(0);
    expect(clock.slept).toEqual([5_000, 10_000]);
    expect(c.stderr()).toContain(`${d.name} is verified`);
    expect(c.stderr()).not.toContain('Checking');

    // On a terminal a spinner says what it is waiting for, on stderr; stdout still gets only the findings.
    const e = await add();
    const tty = await cli(s, {
      configDir,
      tty: true,
      env: { NO_COLOR: '1' },
      clock: fakeClock(
        async (ms) => void (ms === 5_000 && (await s.admin('POST', `/sandbox/domains/${e.id}/publish`, {}))),
      ),
    });
    expect(await tty.run(domainsVerifyRun, { domain: e.id, wait: true })).toBe(0);
    expect(tty.stderr()).toContain(`Checking the records of ${e.id}`);
    expect(tty.stdout()).not.toContain('Checking');
    expect(tty.stdout()).toMatch(/ownership {2,}TXT/);
    expect(
      c
        .stdout()
        .split('\n')
        .filter(Boolean)
        .every((l) => l.split('\t')[4] === 'ok' || l.split('\t')[3] === 'no'),
    ).toBe(true);
  });

  it('gives up at --timeout with exit 1, saying what is still missing; --json still prints the last check', async () => {
    const d = await add();
    const clock = fakeClock();
    const c = await cli(s, { configDir, clock, globals: { json: true } });
    expect(await c.run(domainsVerifyRun, { domain: d.id, wait: true, timeout: 20_000 }, 'svc domains verify')).toBe(1);
    expect(clock.slept).toEqual([5_000, 10_000, 5_000]);
    const out = c.stdout();
    expect(VerifiedDomain.parse(JSON.parse(out))).toMatchObject({ verified: false });
    // At the first check it says what a sandbox needs, not only after the whole --timeout.
    expect(c.stderr()).toMatch(
      new RegExp(
        `^note: this is a local sandbox: nothing is in its DNS zone until you run \`svc sandbox dns publish ${d.id}\`; still waiting`,
      ),
    );
    expect(c.stderr()).toMatch(
      new RegExp(
        `\\nerror: svc domains verify: ${d.name} is not verified after 20s \\(\\d+ required records missing or wrong\\); hint: this is a local sandbox: .* or run \`svc domains verify ${d.id} --publish\`\\n$`,
      ),
    );

    // Propagating records are named as such.
    await s.admin('POST', `/sandbox/domains/${d.id}/publish`, { state: 'propagating' });
    const p = await cli(s, { configDir, clock: fakeClock(), globals: { json: false } });
    expect(await p.run(domainsVerifyRun, { domain: d.id, wait: true, timeout: 5_000 }, 'svc domains verify')).toBe(1);
    expect(p.stderr()).toContain('(published, still propagating)');
  });

  it('updates a domain (its records change) and deletes it', async () => {
    const d = await add();
    const u = await cli(s, { configDir, globals: { json: true } });
    expect(
      await u.run(domainsUpdateRun, { domain: d.id, trackingHost: `links.${d.name}`, mailFromSubdomain: 'mail' }),
    ).toBe(0);
    const updated = UpdatedDomain.parse(JSON.parse(u.stdout()));
    expect(updated).toMatchObject({
      tracking_host: `links.${d.name}`,
      mail_from_subdomain: 'mail',
      records_changed: true,
    });
    expect(updated.records.map((r) => r.kind)).toContain('tracking');

    const bad = await cli(s, { configDir });
    expect(
      await bad.run(domainsUpdateRun, { domain: d.id, trackingHost: 'links.elsewhere.test' }, 'svc domains update'),
    ).toBe(1);
    expect(bad.stderr()).toMatch(/Validation failed — tracking_host: [^;[]+ \[validation_failed, req_\w+\]\n$/);

    const del = await cli(s, { configDir });
    expect(await del.run(domainsDeleteRun, { domain: d.id })).toBe(0);
    expect(del.stderr()).toContain(`Deleted ${d.id}`);
    const gone = await cli(s, { configDir });
    expect(await gone.run(domainsGetRun, { domain: d.id })).toBe(1);
  });
});
