// How the real `svc serve` binary meets what a machine does to a long-running local service: a second server on
// its data directory, traffic from the moment its port opens, a disk with no room at start, a umask that would
// share its files, and supervisors asking whether it is alive and ready.
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import nodemailer from 'nodemailer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ANY_MAIL_PORTS, ANY_PORTS, ensureBuilt, killAll, launch, serve, stop, within } from '../helpers/binary.js';

const dirs: string[] = [];
const dataDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'svc-faults-'));
  dirs.push(d);
  return join(d, 'data');
};

const freePort = () =>
  new Promise<number>((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });

beforeAll(() => ensureBuilt());
afterAll(() => {
  killAll();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('svc serve on a real machine', () => {
  it('refuses a second server on the same data directory, naming the first; the lock goes with the first (even killed)', async () => {
    const dir = dataDir();
    const first = await serve(['--data-dir', dir]);
    const second = launch([...ANY_PORTS, '--data-dir', dir]);
    expect((await within(10_000, second.exited, 'exit of the second server')).code).toBe(1);
    expect(second.stderr()).toContain(
      `another svc serve (pid ${first.proc.pid}, ${first.ready.api}) is running on the data directory ${dir}`,
    );
    expect(second.stderr()).toContain(
      'hint: stop that server first (Ctrl-C where it runs), or give this one another --data-dir',
    );
    // The first is untouched by the attempt.
    expect((await fetch(`${first.origin}/readyz`)).status).toBe(200);

    // A lock left by a crash is no obstacle: the system drops it with the process.
    first.proc.kill('SIGKILL');
    await within(5_000, first.exited, 'exit after SIGKILL');
    const third = await serve(['--data-dir', dir]);
    expect(third.ready.seed?.email).toBe('owner@example.test');
    expect(await stop(third)).toEqual({ code: 0, signal: null });
  });

  it('answers nothing but real answers from the moment its port opens while a fresh data directory is seeded', async () => {
    // Requests of every kind, back to back, until 50 have been answered after the ready line.
    const kinds: [string, string, string | undefined][] = [
      ['GET', '/readyz', undefined],
      ['GET', '/v1/openapi.json', undefined],
      ['POST', '/v1/auth/login', JSON.stringify({ email: 'owner@example.test', password: 'not-the-password' })],
      ['GET', '/sandbox/messages', undefined],
    ];
    /** The answers of one server started on a port picked free; null when another program took that port first. */
    const hammer = async (): Promise<{ statuses: number[]; afterReady: number; stderr: string } | null> => {
      const port = await freePort();
      const started = launch(['--port', String(port), ...ANY_MAIL_PORTS, '--data-dir', dataDir()]);
      let exited = false;
      void started.exited.then(() => (exited = true));
      const statuses: number[] = [];
      let ready = false;
      started.proc.stdout!.once('data', () => (ready = true));
      const deadline = Date.now() + 15_000;
      let afterReady = 0;
      for (let i = 0; afterReady < 50 && Date.now() < deadline && !exited; i++) {
        const [method, path, body] = kinds[i % kinds.length]!;
        const wasReady = ready;
        const res = await fetch(`http://127.0.0.1:${port}${path}`, {
          method,
          body,
          headers: body ? { 'content-type': 'application/json' } : {},
          signal: AbortSignal.timeout(5_000),
        }).catch(() => null);
        if (!res) {
          await new Promise((r) => setTimeout(r, 2)); // not listening yet
          continue;
        }
        statuses.push(res.status);
        await res.arrayBuffer();
        if (wasReady) afterReady++;
      }
      // The port was free when picked, but another test's server may bind it before this one does: try another.
      if (exited && !ready && /is taken by another program/.test(started.stderr())) return null;
      expect(await stop(started)).toEqual({ code: 0, signal: null });
      return { statuses, afterReady, stderr: started.stderr() };
    };
    let run = await hammer();
    for (let tries = 1; run === null && tries < 3; tries++) run = await hammer();
    expect(run, 'three ports picked free were taken before the server could bind them').not.toBeNull();
    expect(run!.afterReady, run!.stderr).toBe(50);
    expect(run!.statuses.filter((s) => s >= 500)).toEqual([]);
    expect(run!.statuses).toContain(401); // the login refused, the sandbox without its token
  }, 60_000);

  it('keeps its database, log and shared-memory files readable only by the user, whatever the umask', async () => {
    const dir = dataDir();
    const s = await serve(['--data-dir', dir]);
    for (const f of ['svc.sqlite', 'svc.sqlite-wal', 'svc.sqlite-shm']) {
      expect((statSync(join(dir, f)).mode & 0o777).toString(8), f).toBe('600');
    }
    expect(await stop(s)).toEqual({ code: 0, signal: null });
  });

  it('says it is alive and ready without a token, and not ready while it shuts down', async () => {
    const s = await serve(['--data-dir', dataDir()]);
    const live = await fetch(`${s.origin}/livez`);
    expect(live.status).toBe(200);
    expect(await live.json()).toEqual({ status: 'ok' });
    const ready = await fetch(`${s.origin}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: 'ready', checks: { listeners: 'ok', database: 'ok' } });
    expect(await stop(s)).toEqual({ code: 0, signal: null });
  });

  it('exits non-zero within seconds when it starts on a database with no room, saying where', async () => {
    const dir = dataDir();
    // A database of a few MiB (mail caught), then a start whose size limit it already fills.
    const s = await serve(['--data-dir', dir]);
    const smtp = nodemailer.createTransport({
      host: '127.0.0.1',
      port: Number(new URL(s.ready.smtp).port),
      secure: false,
      ignoreTLS: true,
    });
    await smtp.sendMail({
      from: 'a@example.org',
      to: 'b@example.org',
      subject: 'big',
      text: 'x'.repeat(3 * 1024 * 1024),
    });
    smtp.close();
    expect(await stop(s)).toEqual({ code: 0, signal: null });

    const full = launch([...ANY_PORTS, '--data-dir', dir, '--max-db-size', '1MB']);
    expect((await within(10_000, full.exited, 'exit of a server with no room')).code).toBe(1);
    expect(full.stderr()).toContain(
      `svc serve cannot start: the database in ${dir} has reached its size limit (--max-db-size), or the disk holding it is full`,
    );
    expect(full.stderr()).toContain('hint: free space there');
  });
});
