// The seed file (`svc serve --seed FILE`, SVC_SEED, `startSandbox({ seed })`): real files in a temporary directory, the
// real server started on them (again, to see a restart change nothing), and the built binary for what a person reads.
import { execFileSync, spawnSync } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_KEY_PATTERN } from '../../src/contract/ids.js';
import { verifyWebhook } from '../../src/contract/signature.js';
import { ServeUsageError } from '../../src/server/index.js';
import { readSeedFile } from '../../src/server/seed-file.js';
import { startSandbox } from '../../src/testing/index.js';
import { BIN, ROOT, ensureBuilt, serve, stop } from '../helpers/binary.js';
import { parse } from '../cli/helpers.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const TEST_KEY = `svc_test_${'A1b2C3d4'.repeat(4)}`;
const RESTRICTED_KEY = `svc_test_${'Z9y8X7w6'.repeat(4)}`;
const LIVE_KEY = `svc_live_${'Q1w2E3r4'.repeat(4)}`;
const SECRET = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
const PASSWORD = 'correct-horse-battery';

let dir: string;
let receiver: Receiver;
const dkim = generateKeyPairSync('rsa', {
  modulusLength: 2048,
  publicKeyEncoding: { type: 'spki', format: 'der' },
  privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
});

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'svc-seed-'));
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The seed file of these tests, in YAML; `scopes` of the test key, `verified` of acme.test. */
function seedYaml(o: { scopes?: string; verified?: boolean } = {}): string {
  const pem = dkim.privateKey
    .trim()
    .split('\n')
    .map((l) => `      ${l}`)
    .join('\n');
  return `# what the app's .env.test names
users:
  - email: ada@example.test
    password: ${PASSWORD}
    confirmed: true
workspaces:
  - name: Acme
    owner: ada@example.test
domains:
  - name: acme.test
    verified: ${o.verified ?? true}
  - name: other.test
    verified: true
    dkim_private_key: |
${pem}
api_keys:
  - value: ${TEST_KEY}
    name: CI
    scopes: [${o.scopes ?? 'emails:send, emails:read, domains:read'}]
  - value: ${RESTRICTED_KEY}
    domain: other.test
  - value: ${LIVE_KEY}
    mode: live
webhook_endpoints:
  - url: ${receiver.url}
    secret: ${SECRET}
    events: [email.delivered]
suppressions:
  - address: gone@example.org
`;
}

function file(name: string, text: string): string {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
}

function send(s: TestServer, key: string, from: string, to = 'delivered@simulator.test') {
  return s.call('POST', '/v1/emails', { token: key, body: { from, to, subject: 'Seeded', text: 'Hi' } });
}

describe('a seed file applied on start', () => {
  const dataDir = () => join(dir, 'data');
  let s: TestServer;
  let first: { domains: string[]; endpoints: string[]; workspace: string; user: string };

  it('makes every thing it declares, and replaces the demo account', async () => {
    const seedFile = file('seed.yaml', seedYaml());
    s = await startTestServer({ dataDir: dataDir(), seedFile });
    try {
      expect(s.ready.seed).toBeNull();
      expect(s.seeded).toMatchObject({ created: 9, updated: 0, unchanged: 0 });

      // The user signs in, confirmed.
      const login = await s.call('POST', '/v1/auth/login', { body: { email: 'ada@example.test', password: PASSWORD } });
      expect(login.status, login.text).toBe(200);
      expect(login.body.user.email_verified).toBe(true);

      // The key of the given value sends from the verified domain.
      const sent = await send(s, TEST_KEY, 'Acme <hello@acme.test>');
      expect(sent.status, sent.text).toBe(202);
      // The restricted key sends from its domain alone; the live key is a live key.
      expect((await send(s, RESTRICTED_KEY, 'x@other.test')).status).toBe(202);
      const outside = await send(s, RESTRICTED_KEY, 'x@acme.test');
      expect(outside.status, outside.text).toBe(403);
      const domains = await s.call('GET', '/v1/domains', { token: TEST_KEY });
      expect(domains.body.data.map((d: { name: string; status: string }) => [d.name, d.status]).sort()).toEqual([
        ['acme.test', 'verified'],
        ['other.test', 'verified'],
      ]);
      // The given DKIM key is the one published.
      const other = domains.body.data.find((d: { name: string }) => d.name === 'other.test');
      const dkimRecord = other.records.find((r: { kind: string }) => r.kind === 'dkim');
      expect(dkimRecord.value).toBe(`v=DKIM1; k=rsa; p=${dkim.publicKey.toString('base64')}`);

      // The endpoint signs its deliveries with the given secret.
      const hooks = await s.admin('GET', '/sandbox/webhooks');
      expect(hooks.body.data).toHaveLength(1);
      expect(hooks.body.data[0]).toMatchObject({ url: receiver.url, secret: SECRET, events: ['email.delivered'] });
      await s.settle();
      const [got] = await receiver.waitFor(1);
      expect(JSON.parse(got!.body).type).toBe('email.delivered');
      expect(() =>
        verifyWebhook({ secret: SECRET, header: got!.headers['service-signature'] as string, body: got!.body }),
      ).not.toThrow();

      // The suppressed address is suppressed.
      const toGone = await send(s, TEST_KEY, 'hello@acme.test', 'gone@example.org');
      expect(toGone.status, toGone.text).toBe(202);
      await s.settle();
      const gone = await s.call('GET', `/v1/emails/${toGone.body.id}`, { token: TEST_KEY });
      expect(gone.body.status).toBe('suppressed');

      first = {
        domains: domains.body.data.map((d: { id: string }) => d.id).sort(),
        endpoints: hooks.body.data.map((e: { id: string }) => e.id),
        workspace: s.seeded!.workspaces.Acme!,
        user: s.seeded!.users['ada@example.test']!,
      };
    } finally {
      await s.close();
    }
  });

  it('changes nothing on a restart with the same file', async () => {
    s = await startTestServer({ dataDir: dataDir(), seedFile: join(dir, 'seed.yaml') });
    try {
      expect(s.seeded).toMatchObject({ created: 0, updated: 0, unchanged: 9 });
      expect(s.seeded!.workspaces.Acme).toBe(first.workspace);
      expect(s.seeded!.users['ada@example.test']).toBe(first.user);
      const domains = await s.call('GET', '/v1/domains', { token: TEST_KEY });
      expect(domains.body.data.map((d: { id: string }) => d.id).sort()).toEqual(first.domains);
      const hooks = await s.admin('GET', '/sandbox/webhooks');
      expect(hooks.body.data.map((e: { id: string }) => e.id)).toEqual(first.endpoints);
      expect(hooks.body.data[0].secret).toBe(SECRET);
    } finally {
      await s.close();
    }
  });

  it('updates what a changed file names', async () => {
    const seedFile = file('seed.yaml', seedYaml({ scopes: 'emails:read', verified: false }));
    s = await startTestServer({ dataDir: dataDir(), seedFile });
    try {
      expect(s.seeded).toMatchObject({ created: 0, updated: 2, unchanged: 7 });
      // The key lost emails:send; acme.test is pending again.
      const refused = await send(s, TEST_KEY, 'hello@acme.test');
      expect(refused.status, refused.text).toBe(403);
      expect(refused.body.code).toBe('insufficient_scope');
      const domains = await s.call('GET', '/v1/domains', { token: RESTRICTED_KEY });
      expect(domains.body.data.find((d: { name: string }) => d.name === 'acme.test').status).toBe('pending');
    } finally {
      await s.close();
    }
    s = await startTestServer({ dataDir: dataDir(), seedFile: file('seed.yaml', seedYaml()) });
    try {
      expect((await send(s, TEST_KEY, 'hello@acme.test')).status).toBe(202);
    } finally {
      await s.close();
    }
  });
});

describe('a seed file with the demo account', () => {
  it('makes both, and the seeded endpoint gets the events of its workspace', async () => {
    const rx = await startReceiver();
    const s = await startTestServer({
      seedObject: {
        demo_account: true,
        users: [{ email: 'ada@example.test', password: PASSWORD }],
        workspaces: [{ name: 'Acme' }],
        domains: [{ name: 'acme.test', verified: true }],
        api_keys: [{ value: TEST_KEY }],
        webhook_endpoints: [{ url: rx.url, secret: SECRET, events: ['email.delivered'] }],
      },
    });
    try {
      expect(s.ready.seed?.email).toBe('owner@example.test');
      expect((await send(s, s.ready.seed!.api_key_test!, 'x@example.test')).status).toBe(202);
      expect((await send(s, TEST_KEY, 'x@acme.test')).status).toBe(202);
      await s.settle();
      const [got] = await rx.waitFor(1);
      expect(JSON.parse(got!.body).type).toBe('email.delivered');
      // Only the seeded workspace's message: the demo's is another workspace.
      expect(rx.received).toHaveLength(1);
    } finally {
      await s.close();
      await rx.close();
    }
  });
});

describe('a bad seed file', () => {
  /** The refusal of a start on this file, which opened nothing: no data directory was made. */
  async function refused(name: string, text: string): Promise<string> {
    const data = join(dir, `data-${name}`);
    const err = await startTestServer({ dataDir: data, seedFile: file(name, text) }).then(
      async (s) => {
        await s.close();
        throw new Error('started');
      },
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ServeUsageError);
    expect(existsSync(data)).toBe(false);
    return (err as Error).message;
  }

  it('names the file, the line and what YAML could not read', async () => {
    const m = await refused('syntax.yaml', 'users:\n  - email: a@example.test\n   password: [oops\n');
    expect(m).toMatch(/^syntax\.yaml:3: not valid YAML or JSON: /);
  });

  it('names the line and the field of a wrong type', async () => {
    const m = await refused(
      'type.yaml',
      `users:\n  - email: ada@example.test\n    password: ${PASSWORD}\n    confirmed: "yes please"\n`,
    );
    expect(m).toBe('type.yaml:4: users[0].confirmed: expected true or false (whether the email address is confirmed)');
  });

  it('refuses a key value that is no key, saying how to make one', async () => {
    const m = await refused(
      'key.yaml',
      `users:\n  - email: ada@example.test\n    password: ${PASSWORD}\nworkspaces:\n  - name: Acme\napi_keys:\n  - value: sk_test_123\n`,
    );
    expect(m).toBe(
      'key.yaml:7: api_keys[0].value: expected an API key such as svc_test_… (41 characters: svc_test_ or svc_live_, ' +
        'then 32 letters and digits); make one with `svc keys generate --mode test`',
    );
  });

  it('names an unknown field and the fields it may have', async () => {
    const m = await refused('unknown.yaml', `users:\n  - email: ada@example.test\n    pasword: ${PASSWORD}\n`);
    expect(m).toBe(
      'unknown.yaml:3: users[0].pasword: unknown field; expected one of email, password, confirmed, name (and 1 more)',
    );
  });

  it('says a field is missing', async () => {
    const m = await refused('missing.yaml', 'users:\n  - email: ada@example.test\n');
    expect(m).toBe('missing.yaml:2: users[0].password: missing; expected a password (at least 12 characters)');
  });

  it('reads JSON with the same lines, and refuses what the file names wrongly', async () => {
    const m = await refused(
      'seed.json',
      JSON.stringify(
        {
          users: [{ email: 'ada@example.test', password: PASSWORD }],
          workspaces: [{ name: 'Acme', owner: 'bob@x.test' }],
        },
        null,
        2,
      ),
    );
    expect(m).toBe('seed.json:11: workspaces[0].owner: expected the email of a user declared under users');
  });

  it('refuses a domain name the API would refuse, with its line', async () => {
    const m = await refused(
      'suffix.yaml',
      `users:\n  - email: ada@example.test\n    password: ${PASSWORD}\nworkspaces:\n  - name: Acme\ndomains:\n  - name: co.uk\n`,
    );
    expect(m).toBe(
      'suffix.yaml:7: domains[0].name: expected a domain you can send from; it is a public suffix that anyone can register under',
    );
  });

  it('names a file that is not there', async () => {
    const err = await startTestServer({ seedFile: join(dir, 'not-there.yaml') }).catch((e: unknown) => e);
    expect((err as Error).message).toBe(`--seed ${join(dir, 'not-there.yaml')}: no such file.`);
  });
});

describe('the documentation', () => {
  it('has a seed file example that svc serve takes', () => {
    const doc = readFileSync(join(ROOT, 'docs', 'local-server.md'), 'utf8');
    const example = /```yaml\n(# seed\.yaml[\s\S]*?)```/.exec(doc)?.[1];
    expect(example).toBeDefined();
    const { seed } = readSeedFile(file('doc-example.yaml', example!));
    expect(Object.keys(seed).sort()).toEqual([
      'api_keys',
      'domains',
      'suppressions',
      'users',
      'webhook_endpoints',
      'workspaces',
    ]);
  });
});

describe('startSandbox({ seed })', () => {
  it('takes the same shape as an object, its client sending with its test key', async () => {
    const sb = await startSandbox({
      seed: {
        users: [{ email: 'ada@example.test', password: PASSWORD }],
        workspaces: [{ name: 'Acme' }],
        domains: [{ name: 'acme.test', verified: true }],
        api_keys: [{ value: TEST_KEY, scopes: ['emails:send'] }],
      },
    });
    try {
      expect(sb.seed).toBeNull();
      expect(sb.seeded!.workspaces.Acme).toMatch(/^ws_/);
      const r = await sb.client.call('sendEmail', {
        body: { from: 'hello@acme.test', to: 'ada@example.org', subject: 'Code', text: 'Code: 123456' },
      });
      expect(r.status).toBe(202);
      expect((await sb.inbox.waitFor({ to: 'ada@example.org' })).code).toBe('123456');
    } finally {
      await sb.close();
    }
  });

  it('refuses a bad object with the same words, without a line', async () => {
    const err = await startSandbox({ seed: { api_keys: [{ value: 'nope' }] } as never }).catch((e: unknown) => e);
    expect((err as Error).message).toMatch(
      /^seed: api_keys\[0\]\.value: expected an API key such as svc_test_… .*make one with `svc keys generate --mode test`/,
    );
  });
});

describe('svc serve argv', () => {
  it('takes --seed FILE beside --no-seed: a file, no demo account, or neither given', async () => {
    const seedOf = async (...argv: string[]) => ((await parse('serve', ...argv)).opts as { seed?: unknown }).seed;
    expect(await seedOf('--seed', 'test/seed.yaml')).toBe('test/seed.yaml');
    expect(await seedOf('--no-seed')).toBe(false);
    expect(await seedOf()).not.toBe(false);
  });
});

describe('the binary', () => {
  beforeAll(() => ensureBuilt(), 180_000);

  it('refuses a bad file with exit 2 before anything opens', () => {
    const bad = file('bad.yaml', 'api_keys:\n  - value: svc_test_short\n');
    const r = spawnSync(process.execPath, [BIN, 'serve', '--memory', '--port', '0', '--seed', bad], {
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(r.status).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(
      'error: svc serve: bad.yaml:2: api_keys[0].value: expected an API key such as svc_test_… (41 characters',
    );
    // The command line names `svc` as this install runs it (here `npx svc`).
    expect(r.stderr).toMatch(/make one with `(npx )?svc keys generate --mode test`/);
  });

  it('prints a fresh key value offline with svc keys generate, which a seed file takes from SVC_SEED', async () => {
    const env = { ...process.env, SVC_BASE_URL: 'http://127.0.0.1:9/v1' };
    const key = execFileSync(process.execPath, [BIN, 'keys', 'generate'], { encoding: 'utf8', env }).trim();
    expect(key).toMatch(API_KEY_PATTERN);
    expect(key.startsWith('svc_test_')).toBe(true);
    const live = execFileSync(process.execPath, [BIN, 'keys', 'generate', '--mode', 'live'], { encoding: 'utf8', env });
    expect(live.trim()).toMatch(/^svc_live_[0-9A-Za-z]{32}$/);
    expect(live.trim()).not.toBe(key);

    const seed = file(
      'env.yaml',
      `users:\n  - email: ci@example.test\n    password: ${PASSWORD}\nworkspaces:\n  - name: CI\ndomains:\n  - name: ci.test\n    verified: true\napi_keys:\n  - value: ${key}\n`,
    );
    const served = await serve(['--memory'], { SVC_SEED: seed });
    try {
      expect(served.ready.seed).toBeNull();
      const r = await fetch(`${served.ready.api}/emails`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ from: 'ci@ci.test', to: 'delivered@simulator.test', subject: 'CI', text: 'Hi' }),
      });
      expect(r.status).toBe(202);
    } finally {
      await stop(served);
    }
  });
});
