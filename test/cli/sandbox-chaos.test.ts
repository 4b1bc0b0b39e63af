// `svc sandbox chaos set|list|clear`: the built binary against `svc serve` run as a process of its own, as a person
// meets them — a rule set, its effect on a send made with the same binary, the server's log naming the rule, the
// listing as a table and as JSON, usage errors before anything is sent, and the server's 422 for a rule it refuses.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChaosState } from '../../src/contract/chaos.js';
import { BIN, clientEnv, ensureBuilt, killAll, ROOT, serve, stop, type Served } from '../helpers/binary.js';

describe('svc sandbox chaos, built, against svc serve', { timeout: 60_000 }, () => {
  let home: string;
  let s: Served;
  beforeAll(async () => {
    ensureBuilt();
    home = mkdtempSync(join(tmpdir(), 'svc-chaos-cli-'));
    s = await serve(['--memory', '--clock', 'manual'], { SVC_RUNTIME_DIR: join(home, 'run') });
  }, 120_000);
  afterAll(async () => {
    if (s && s.proc.exitCode === null) await stop(s);
    killAll();
    rmSync(home, { recursive: true, force: true });
  });

  const svc = (args: string[]) =>
    execa(process.execPath, [BIN, ...args], {
      env: clientEnv(home, s),
      extendEnv: false,
      reject: false,
      cwd: ROOT,
    });
  const send = (to: string) =>
    svc(['emails', 'send', '--from', 'orders@example.test', '--to', to, '--subject', 'Chaos', '--text', 'hi']);

  it('set replaces the rules with one; a send meets it, the client retries through it, the log names it', async () => {
    const set = await svc([
      'sandbox',
      'chaos',
      'set',
      '--path',
      '/v1/emails',
      '--method',
      'post',
      '--status',
      '503',
      '--retry-after',
      '0',
      '--times',
      '2',
      '--seed',
      '9',
    ]);
    expect(set.exitCode, set.stderr).toBe(0);
    // Piped: one tab-separated line per rule (index, match, action, probability, remaining).
    expect(set.stdout).toBe('0\tPOST /v1/emails\t503 Retry-After 0\t-\t2');
    expect(set.stderr).toMatch(
      /^Chaos rule 0 set \(seed 9\), in place of any rules before; .*svc sandbox chaos clear\n?$/,
    );

    const sent = await send('cli-chaos@example.org');
    expect(sent.exitCode, sent.stderr).toBe(0);
    expect(sent.stdout).toMatch(/^msg_\w+\tqueued$/);
    expect(s.stderr()).toMatch(/request .*method=POST path=\/v1\/emails status=503 .*chaos="rule 0: answered 503"/);

    const json = await svc(['sandbox', 'chaos', 'list', '--json']);
    expect(json.exitCode, json.stderr).toBe(0);
    expect(ChaosState.parse(JSON.parse(json.stdout))).toEqual({
      rules: [
        {
          match: { method: 'POST', path: '/v1/emails' },
          action: { status: 503, retry_after: 0 },
          times: 2,
          remaining: 0,
        },
      ],
      seed: 9,
    });

    // A second set replaces the first.
    const smtp = await svc(['sandbox', 'chaos', 'set', '--smtp', 'rcpt', '--code', '451', '--message', 'Greylisted']);
    expect(smtp.exitCode, smtp.stderr).toBe(0);
    const list = await svc(['sandbox', 'chaos', 'list']);
    expect(list.stdout).toBe('0\tsmtp rcpt\t451 Greylisted\t-\tno limit');
  });

  it('clear removes every rule: a send goes through at once', async () => {
    const clear = await svc(['sandbox', 'chaos', 'clear']);
    expect(clear.exitCode, clear.stderr).toBe(0);
    expect(clear.stdout).toBe('');
    expect(clear.stderr).toBe('Chaos rules cleared: requests and SMTP sessions are handled as usual.');
    const list = await svc(['sandbox', 'chaos', 'list', '--json']);
    expect(JSON.parse(list.stdout).rules).toEqual([]);
    expect((await svc(['sandbox', 'chaos', 'list'])).stdout).toBe('');
    expect((await send('after-clear@example.org')).exitCode).toBe(0);
  });

  it('says what is wrong with the flags before anything is sent (exit 2), and relays the server’s 422 (exit 1)', async () => {
    const none = await svc(['sandbox', 'chaos', 'set', '--path', '/v1/emails']);
    expect(none.exitCode).toBe(2);
    expect(none.stderr).toMatch(/say what the rule does: --status, --delay or --reset/);
    const both = await svc(['sandbox', 'chaos', 'set', '--status', '503', '--reset']);
    expect(both.exitCode).toBe(2);
    expect(both.stderr).toMatch(/'--status <status>' cannot be used with option '--reset'/);
    const code = await svc(['sandbox', 'chaos', 'set', '--path', '/v1/emails', '--code', '451']);
    expect(code.exitCode).toBe(2);
    const range = await svc(['sandbox', 'chaos', 'set', '--status', '600']);
    expect(range.exitCode).toBe(2);
    expect(range.stderr).toMatch(/--status must be a whole number from 400 to 599/);
    const p = await svc(['sandbox', 'chaos', 'set', '--status', '500', '--probability', '1.5']);
    expect(p.exitCode).toBe(2);

    const noRoute = await svc(['sandbox', 'chaos', 'set', '--path', '/v1/email', '--status', '503']);
    expect(noRoute.exitCode).toBe(1);
    expect(noRoute.stderr).toMatch(/rules\.0\.match\.path: no \/v1 route has this path/);
    expect(JSON.parse((await svc(['sandbox', 'chaos', 'list', '--json'])).stdout).rules).toEqual([]);
  });
});
