// `svc inbox release` and `svc serve --relay-url` through the built binary, against a real SMTP relay on loopback: the
// relay's credentials come from SVC_RELAY_URL and never show in the ready line or on stderr; a release sends the
// caught bytes; a recipient outside the allow-list is refused naming it; the argv of the relay's flags.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, clientEnv, ensureBuilt, killAll, ROOT, type Served, serve, stop } from '../helpers/binary.js';
import { RELAY_PASS, startRelay, type TestRelay } from '../helpers/relay.js';
import { printSummary } from '../../src/cli/serve/serve-summary.js';
import { parse, testIO } from './helpers.js';

describe('svc inbox release (the built binary)', { timeout: 120_000 }, () => {
  let relay: TestRelay;
  let served: Served;
  let home: string;
  beforeAll(async () => {
    ensureBuilt();
    relay = await startRelay();
    home = mkdtempSync(join(tmpdir(), 'svc-release-'));
    served = await serve(['--memory', '--relay-allow', '*@example.com'], { SVC_RELAY_URL: relay.url });
  }, 180_000);
  afterAll(async () => {
    if (served) await stop(served);
    killAll();
    await relay?.close();
    rmSync(home, { recursive: true, force: true });
  });

  const svc = (args: string[]) =>
    execa(process.execPath, [BIN, ...args], {
      env: clientEnv(home, served),
      extendEnv: false,
      reject: false,
      cwd: ROOT,
      // The raw source is compared byte for byte: its final line end is part of it.
      stripFinalNewline: false,
    });

  it('names the relay without its password in the ready line, and never on stderr', () => {
    expect(served.ready.relay).toEqual({
      url: `smtp://relay-user:***@127.0.0.1:${relay.port}`,
      allow: ['*@example.com'],
      matching: [],
    });
    expect(JSON.stringify(served.ready)).not.toContain(RELAY_PASS);
    expect(served.stderr()).not.toContain(RELAY_PASS);
  });

  it('names the relay, its password hidden, with its allow-list and rules in the summary on a terminal', async () => {
    const t = await testIO({ tty: true, env: { NO_COLOR: '1' } });
    const ready = { ...served.ready, relay: { ...served.ready.relay!, matching: ['*@qa.example.com'] } };
    printSummary(t.io, ready, { dataDir: undefined, registered: true, sinkStarttls: false, where: 'stdout' });
    expect(t.stdout()).toMatch(
      new RegExp(
        `^  Relay +smtp://relay-user:\\*\\*\\*@127\\.0\\.0\\.1:${relay.port}  releases to \\*@example\\.com; relays live mail to \\*@qa\\.example\\.com$`,
        'm',
      ),
    );
    expect(t.stdout()).not.toContain(RELAY_PASS);
  });

  it('sends the caught message to the --to addresses, exactly as caught; refuses one outside the allow-list', async () => {
    const sent = await svc([
      'emails',
      'send',
      '--from',
      'orders@example.test',
      '--to',
      'ada@dest.example',
      '--subject',
      'Release me',
      '--text',
      'Caught, then released.',
    ]);
    expect(sent.exitCode, sent.stderr).toBe(0);
    const msg = sent.stdout.split('\t')[0]!.trim();
    const waited = await svc(['inbox', 'wait', '--to', 'ada@dest.example', '--json']);
    expect(waited.exitCode, waited.stderr).toBe(0);

    const arrived = relay.next();
    const r = await svc(['inbox', 'release', msg, '--to', 'qa@example.com', '--to', 'dev@example.com']);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^to\s+qa@example\.com, dev@example\.com$/m);
    expect(r.stdout).toMatch(/^reply\s+250/m);
    expect(r.stdout).not.toContain(RELAY_PASS);
    const got = await arrived;
    expect(got.rcptTo).toEqual(['qa@example.com', 'dev@example.com']);
    const raw = await svc(['inbox', 'show', msg, '--raw']);
    expect(got.raw.toString('utf8')).toBe(raw.stdout);

    const refused = await svc(['inbox', 'release', msg, '--to', 'someone@elsewhere.net']);
    expect(refused.exitCode).toBe(1);
    expect(refused.stderr).toContain('someone@elsewhere.net');
    expect(refused.stderr).toContain('--relay-allow *@example.com');
    expect(refused.stderr).toContain('relay_recipient_not_allowed');

    const json = await svc(['inbox', 'release', msg, '--to', 'json@example.com', '--json']);
    expect(json.exitCode, json.stderr).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({ to: ['json@example.com'], relay: served.ready.relay!.url });
  });

  it('a bad relay URL stops the start (exit 2) without echoing its password', async () => {
    const r = await execa(process.execPath, [BIN, 'serve', '--memory', '--relay-url', 'http://u:pw-not-shown@host'], {
      reject: false,
      cwd: ROOT,
      env: { ...process.env, HOME: home },
    });
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain('--relay-url http://u:***@host');
    expect(r.stderr).not.toContain('pw-not-shown');
  });
});

describe('svc serve and svc inbox release argv', () => {
  it('takes the relay flags, repeatable where they say so', async () => {
    const r = await parse(
      'serve',
      '--relay-url',
      'smtp://h:25',
      '--relay-from',
      'me@example.com',
      '--relay-allow',
      '*@example.com',
      '--relay-allow',
      'ann@example.org',
      '--relay-matching',
      '*@qa.example.com',
    );
    expect(r.opts).toMatchObject({
      relayUrl: 'smtp://h:25',
      relayFrom: 'me@example.com',
      relayAllow: ['*@example.com', 'ann@example.org'],
      relayMatching: ['*@qa.example.com'],
    });
    expect((await parse('serve', '--relay', 'smtp://h:25')).opts).toMatchObject({ relay: 'smtp://h:25' });
  });

  it('release takes repeatable --to, and needs one', async () => {
    const r = await parse('inbox', 'release', 'eml_1', '--to', 'a@example.com', '--to', 'b@example.com');
    expect(r.command).toBe('inbox release');
    expect(r.opts).toEqual({ id: 'eml_1', to: ['a@example.com', 'b@example.com'] });
    const missing = await parse('inbox', 'release', 'eml_1');
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('--to');
  });
});
