import { startServer, type RunningServer, type ServeOptions } from '../../src/server/index.js';
import { silentLogger } from '../../src/lib/log.js';

export interface Reply<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface TestServer extends RunningServer {
  /** Calls the server: `path` starting with `/v1` or `/sandbox`; JSON body unless `raw` is given. */
  call<T = any>(
    method: string,
    path: string,
    opts?: { body?: unknown; raw?: string; token?: string | null; headers?: Record<string, string> },
  ): Promise<Reply<T>>;
  /** A sandbox call with the admin token. */
  admin<T = any>(method: string, path: string, body?: unknown): Promise<Reply<T>>;
  /** Moves the manual clock and runs every job that became due. */
  advance(seconds: number): Promise<void>;
  /** Runs the jobs due now (queued mail etc.) and waits for them. */
  settle(): Promise<void>;
}

/** Starts the real server: port 0, `:memory:` (unless a data dir is given), manual clock, quiet logs. */
export async function startTestServer(opts: ServeOptions = {}): Promise<TestServer> {
  const server = await startServer({
    memory: !opts.dataDir,
    port: 0,
    smtpPort: 0,
    submissionPort: 0,
    submissionsPort: 0,
    pop3Port: 0,
    imapPort: 0,
    clock: 'manual',
    log: silentLogger,
    ...opts,
  });
  const call: TestServer['call'] = async (method, path, o = {}) => {
    const headers: Record<string, string> = { ...(o.headers ?? {}) };
    if (o.token) headers.authorization = `Bearer ${o.token}`;
    let body: string | undefined;
    if (o.raw !== undefined) body = o.raw;
    else if (o.body !== undefined) {
      body = JSON.stringify(o.body);
      headers['content-type'] ??= 'application/json';
    }
    const res = await fetch(server.origin + path, { method, headers, body });
    const text = await res.text();
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    return { status: res.status, headers: res.headers, body: parsed as any, text };
  };
  return Object.assign(server, {
    call,
    admin: (method: string, path: string, body?: unknown) => call(method, path, { body, token: server.adminToken }),
    async advance(seconds: number) {
      const r = await call('POST', '/sandbox/clock', { body: { advance_seconds: seconds }, token: server.adminToken });
      if (r.status !== 200) throw new Error(`clock move failed: ${r.status} ${r.text}`);
    },
    async settle() {
      await server.scheduler.runDue();
    },
  });
}
