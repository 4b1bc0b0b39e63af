import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createCredentialStore, type Keyring } from './credentials.js';

const dirs: string[] = [];
const tmp = () => {
  const d = mkdtempSync(join(tmpdir(), 'svc-cred-'));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** An OS keychain standing in for the real one: a map, or one that fails like a Linux box without D-Bus. */
function fakeKeyring(o: { broken?: boolean } = {}) {
  const saved = new Map<string, string>();
  const keyring: Keyring = {
    AsyncEntry: class {
      constructor(
        readonly service: string,
        readonly account: string,
      ) {
        if (o.broken) throw new Error('Platform failure: DBus error: no session bus\nmore detail');
      }
      async getPassword() {
        return saved.get(`${this.service}/${this.account}`) ?? null;
      }
      async setPassword(p: string) {
        saved.set(`${this.service}/${this.account}`, p);
      }
      async deletePassword() {
        return saved.delete(`${this.service}/${this.account}`);
      }
    },
  };
  return { saved, keyring: async () => keyring };
}

const mode = (path: string) => statSync(path).mode & 0o777;

describe('the credential store', () => {
  it('keeps secrets in the keychain when there is one, and nothing in a file', async () => {
    const configDir = tmp();
    const k = fakeKeyring();
    const notices: string[] = [];
    const store = createCredentialStore({ configDir, env: {}, notice: (m) => notices.push(m), keyring: k.keyring });
    await store.set('default/session', '{"refresh_token":"rt_1"}');
    expect(k.saved.get('svc/default/session')).toBe('{"refresh_token":"rt_1"}');
    expect(await store.get('default/session')).toBe('{"refresh_token":"rt_1"}');
    expect(() => statSync(join(configDir, 'secrets', 'credentials.json'))).toThrow();
    expect(await store.where()).toMatchObject({ kind: 'keychain' });
    await store.delete('default/session');
    expect(await store.get('default/session')).toBeUndefined();
    expect(notices).toEqual([]);
  });

  it('falls back to a 0600 file in a 0700 directory without a keychain, and says so once', async () => {
    const configDir = tmp();
    const notices: string[] = [];
    const open = () =>
      createCredentialStore({
        configDir,
        env: {},
        notice: (m) => notices.push(m),
        keyring: fakeKeyring({ broken: true }).keyring,
      });
    const first = open();
    await first.set('default/session', 'tokens-1');
    await first.set('default/api_key', 'svc_test_x');
    const file = join(configDir, 'secrets', 'credentials.json');
    expect(mode(file)).toBe(0o600);
    expect(mode(join(configDir, 'secrets'))).toBe(0o700);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({
      'default/session': 'tokens-1',
      'default/api_key': 'svc_test_x',
    });
    expect(notices).toHaveLength(1);
    expect(notices[0]).toContain(file);
    expect(notices[0]).toContain('DBus error: no session bus');
    expect(notices[0]).not.toContain('more detail');

    // A later run: the file is there, nothing more is said.
    const second = open();
    expect(await second.get('default/session')).toBe('tokens-1');
    await second.set('default/session', 'tokens-2');
    await second.delete('default/api_key');
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ 'default/session': 'tokens-2' });
    expect(notices).toHaveLength(1);
    expect(await second.where()).toMatchObject({
      kind: 'file',
      location: file,
      reason: expect.stringMatching(/^no usable keychain: DBus error/),
    });
  });

  it('narrows a secrets directory that was made with a wider mode', async () => {
    const configDir = tmp();
    mkdirSync(join(configDir, 'secrets'), { mode: 0o755 });
    const store = createCredentialStore({
      configDir,
      env: { SVC_CREDENTIAL_STORE: 'file' },
      notice: () => {},
      keyring: fakeKeyring().keyring,
    });
    await store.set('p/session', 's');
    expect(mode(join(configDir, 'secrets'))).toBe(0o700);
  });

  it('uses the file without trying the keychain when SVC_CREDENTIAL_STORE=file, and says nothing: it was asked for', async () => {
    const configDir = tmp();
    const k = fakeKeyring();
    const notices: string[] = [];
    const store = createCredentialStore({
      configDir,
      env: { SVC_CREDENTIAL_STORE: 'file' },
      notice: (m) => notices.push(m),
      keyring: k.keyring,
    });
    await store.set('default/session', 's');
    expect(k.saved.size).toBe(0);
    expect(await store.get('default/session')).toBe('s');
    expect(notices).toEqual([]);
  });

  it('finds a secret saved in the file while the keychain was missing, and moves it out of the file once the keychain takes one', async () => {
    const configDir = tmp();
    await createCredentialStore({
      configDir,
      env: {},
      notice: () => {},
      keyring: fakeKeyring({ broken: true }).keyring,
    }).set('default/session', 'old');
    const k = fakeKeyring();
    const store = createCredentialStore({ configDir, env: {}, notice: () => {}, keyring: k.keyring });
    expect(await store.get('default/session')).toBe('old');
    await store.set('default/session', 'new');
    expect(k.saved.get('svc/default/session')).toBe('new');
    expect(JSON.parse(readFileSync(join(configDir, 'secrets', 'credentials.json'), 'utf8'))).toEqual({});
  });

  it('refuses a value of SVC_CREDENTIAL_STORE it does not know, and a forced keychain that is missing', async () => {
    expect(() =>
      createCredentialStore({ configDir: tmp(), env: { SVC_CREDENTIAL_STORE: 'vault' }, notice: () => {} }),
    ).toThrow(/SVC_CREDENTIAL_STORE is "vault"/);
    const forced = createCredentialStore({
      configDir: tmp(),
      env: { SVC_CREDENTIAL_STORE: 'keychain' },
      notice: () => {},
      keyring: fakeKeyring({ broken: true }).keyring,
    });
    await expect(forced.set('default/session', 's')).rejects.toThrow(/the OS keychain is not usable here/);
  });
});
