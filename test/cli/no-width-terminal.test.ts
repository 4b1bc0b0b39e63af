// The built binary in a pseudo-terminal that reports 0 columns, as `script -qc`, `docker run -t` and
// `kubectl exec -t` give before the size is set: commands that wait show no live spinner there, end by their
// --timeout, and end on Ctrl-C and SIGTERM.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pty from '@lydell/node-pty';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ANSI, BIN, ensureBuilt, ROOT } from '../helpers/binary.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

/** What a live spinner writes to redraw itself: the cursor moved up a line, or a line cleared. */
const REDRAW = /\x1b\[\d*[AK]/;

interface Run {
  exitCode: number;
  signal: number;
  raw: string;
  screen: string;
}

describe('svc in a terminal of no width', { timeout: 60_000 }, () => {
  let s: TestServer;
  let home: string;
  let domainId: string;

  beforeAll(async () => {
    ensureBuilt();
    s = await startTestServer();
    home = mkdtempSync(join(tmpdir(), 'svc-nowidth-'));
    const session = (
      await s.call('POST', '/v1/auth/login', { body: { email: s.seed!.email, password: s.seed!.password } })
    ).body.access_token as string;
    const added = await s.call('POST', '/v1/domains', { token: session, body: { name: 'unpublished.example.com' } });
    expect(added.status, added.text).toBe(201);
    domainId = added.body.id;
  });
  afterAll(async () => {
    await s.close();
    rmSync(home, { recursive: true, force: true });
  });

  /**
   * `node args…` in a pseudo-terminal whose size is set to 0 × 0 (or `cols` × 24) before node starts (node-pty itself
   * only opens terminals of a positive size); its first line is the terminal's name. `act` sees the screen as it grows and may signal or type, until it says it did; a
   * run still alive after 30 s is killed and fails the test, so a hang shows as a failure rather than a process left
   * spinning.
   */
  function noWidth(
    args: string[],
    act?: (screen: string, term: pty.IPty, raw: string) => boolean,
    o: { cols?: number } = {},
  ): Promise<Run> {
    const size = `stty cols ${o.cols ?? 0} rows ${o.cols === undefined ? 0 : 24}`;
    const term = pty.spawn('/bin/sh', ['-c', `tty && ${size} && exec "$0" "$@"`, process.execPath, ...args], {
      name: 'xterm-256color',
      cols: 80,
      rows: 24,
      cwd: ROOT,
      env: {
        PATH: process.env.PATH!,
        HOME: home,
        SVC_CONFIG_DIR: join(home, 'config'),
        SVC_RUNTIME_DIR: join(home, 'run'),
        SVC_CREDENTIAL_STORE: 'file',
        SVC_BASE_URL: s.api,
        SVC_ADMIN_TOKEN: s.adminToken,
        SVC_API_KEY: s.seed!.api_key_test!,
      },
    });
    let raw = '';
    let acted = false;
    term.onData((d) => {
      // Only a bounded prefix is kept: a redraw loop writes megabytes.
      if (raw.length < 100_000) raw += d;
      if (act && !acted) acted = act(raw.replace(ANSI, ''), term, raw);
    });
    return new Promise<Run>((resolve, reject) => {
      const hung = setTimeout(() => {
        term.kill('SIGKILL');
        reject(new Error(`still running after 30 s; its first output:\n${JSON.stringify(raw.slice(0, 500))}`));
      }, 30_000);
      term.onExit(({ exitCode, signal }) => {
        clearTimeout(hung);
        resolve({ exitCode, signal: signal ?? 0, raw, screen: raw.replace(ANSI, '') });
      });
    });
  }

  const svc = (args: string[], act?: (screen: string, term: pty.IPty, raw: string) => boolean) =>
    noWidth([BIN, ...args], act);
  /** Sends `signal` once the screen shows `text`. */
  const signalOn =
    (text: string, signal: 'SIGTERM' | 'SIGINT') =>
    (screen: string, term: pty.IPty): boolean => {
      if (!screen.includes(text)) return false;
      term.kill(signal);
      return true;
    };

  it('is a terminal of 0 columns, which node reports as such', async () => {
    const run = await noWidth(['-e', 'console.log(JSON.stringify([process.stderr.isTTY, process.stderr.columns]))']);
    expect(run.screen.trim().split(/\r?\n/)[1]).toBe('[true,0]');
  });

  it('ends `svc inbox wait` by its --timeout with exit 1, its wait said once and no spinner drawn', async () => {
    const run = await svc(['inbox', 'wait', '--to', 'nobody@example.org', '--timeout', '2s']);
    expect([run.exitCode, run.signal], run.screen).toEqual([1, 0]);
    expect(run.screen.match(/Waiting up to 2s for a message to nobody@example\.org/g)).toHaveLength(1);
    expect(run.screen).toContain('error: svc inbox wait: no message to nobody@example.org arrived within 2s');
    expect(run.raw).not.toMatch(REDRAW);
  });

  it('ends `svc domains verify --wait` by its --timeout with exit 1 and the findings printed', async () => {
    const run = await svc(['domains', 'verify', domainId, '--wait', '--timeout', '2s']);
    expect([run.exitCode, run.signal], run.screen).toEqual([1, 0]);
    expect(run.screen).toContain(`Checking the records of ${domainId}…`);
    expect(run.screen).toContain('error: svc domains verify: unpublished.example.com is not verified after 2s');
    expect(run.raw).not.toMatch(REDRAW);
  });

  it('ends a wait on Ctrl-C and on SIGTERM, by that signal', async () => {
    const wait = ['inbox', 'wait', '--to', 'nobody@example.org', '--timeout', '10m'];
    // Ctrl-C typed on the terminal: its line discipline sends SIGINT to the foreground process.
    const ctrlC = await svc(wait, (screen, term) => {
      if (!screen.includes('Waiting up to 10m')) return false;
      term.write('\x03');
      return true;
    });
    expect([ctrlC.exitCode, ctrlC.signal], ctrlC.screen).toEqual([0, 2]);
    const term = await svc(wait, signalOn('Waiting up to 10m', 'SIGTERM'));
    expect([term.exitCode, term.signal], term.screen).toEqual([0, 15]);
    const verify = await svc(
      ['domains', 'verify', domainId, '--wait', '--timeout', '10m'],
      signalOn('Checking the records', 'SIGINT'),
    );
    expect([verify.exitCode, verify.signal], verify.screen).toEqual([0, 2]);
  });

  it('stops a spinner when its terminal is resized to no width, and still ends on SIGTERM', async () => {
    let resized = -1;
    const run = await noWidth(
      [BIN, 'inbox', 'wait', '--to', 'nobody@example.org', '--timeout', '10m'],
      (screen, term, raw) => {
        if (resized < 0) {
          // The spinner drew a frame over the one before: resize the terminal (its name is the first line) to 0.
          if (!REDRAW.test(raw)) return false;
          execFileSync('stty', ['-F', screen.split(/\r?\n/)[0]!.trim(), 'cols', '0']);
          resized = raw.length;
          return false;
        }
        // ora shows the cursor again when it stops.
        if (!raw.slice(resized).includes('\x1b[?25h')) return false;
        term.kill('SIGTERM');
        return true;
      },
      { cols: 80 },
    );
    expect([run.exitCode, run.signal], run.screen).toEqual([0, 15]);
    expect(run.raw.slice(run.raw.indexOf('\x1b[?25h', resized))).not.toMatch(/\x1b\[\d*A/);
  });
});
