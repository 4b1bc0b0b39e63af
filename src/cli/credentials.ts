// Secrets at rest (refresh and access tokens, saved API keys): the OS keychain through @napi-rs/keyring, else a
// file readable only by the user in a directory only the user can enter. The native keyring module is loaded only
// when a secret is actually read or written.
import { chmod, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { UsageError } from './errors.js';
import type { Env } from './io.js';
import { withFileLock } from './lock.js';

/** The keychain's service name for every svc secret; the account is `<profile>/<secret>`. */
const SERVICE = 'svc';
/** A keychain that needs longer than this is treated as absent (a hung D-Bus must not hang the command). */
const KEYCHAIN_TIMEOUT_MS = 3_000;

export interface CredentialStore {
  /** The directory of the credential file and of the lock files (created 0700 on first use). */
  readonly dir: string;
  get(name: string): Promise<string | undefined>;
  set(name: string, value: string): Promise<void>;
  delete(name: string): Promise<void>;
  /** Where secrets are kept now, and why not in the keychain: probes the keychain once. */
  where(): Promise<{ kind: 'keychain' | 'file'; location: string; reason?: string }>;
  /** Creates the directory (0700) if needed; for lock files. */
  ensureDir(): Promise<string>;
}

export interface CredentialOptions {
  /** The config directory; secrets live in its `secrets` subdirectory. */
  configDir: string;
  env: Env;
  /** Says something to the person (stderr): the fallback to the file, once. */
  notice(message: string): void;
  /** The keychain binding; @napi-rs/keyring unless replaced (tests stand in for the OS keychain). */
  keyring?: () => Promise<Keyring>;
}

/** The part of @napi-rs/keyring this module uses. */
export interface Keyring {
  AsyncEntry: new (
    service: string,
    account: string,
    options?: { linux?: { store?: 'secret-service' | 'keyutils' } },
  ) => KeyringEntry;
}
export interface KeyringEntry {
  getPassword(signal?: AbortSignal): Promise<string | null | undefined>;
  setPassword(password: string, signal?: AbortSignal): Promise<void>;
  deletePassword(signal?: AbortSignal): Promise<boolean>;
}

export function createCredentialStore(o: CredentialOptions): CredentialStore {
  const choice = o.env.SVC_CREDENTIAL_STORE || undefined;
  if (choice !== undefined && choice !== 'file' && choice !== 'keychain') {
    throw new UsageError(
      `SVC_CREDENTIAL_STORE is "${choice}"`,
      'set it to file or keychain, or unset it to use the keychain when there is one',
    );
  }
  const dir = join(o.configDir, 'secrets');
  const file = join(dir, 'credentials.json');
  /** Why the keychain is not used (set once it failed, or when the file is chosen). */
  let unusable: string | undefined = choice === 'file' ? 'SVC_CREDENTIAL_STORE=file' : undefined;

  async function ensureDir(): Promise<string> {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    await chmod(dir, 0o700); // a directory made earlier by someone else with a wider mode is narrowed
    return dir;
  }

  /** Runs a keychain operation; `undefined` when there is no usable keychain (and from then on, in this process). */
  const loadKeyring = o.keyring ?? (() => import('@napi-rs/keyring') as Promise<Keyring>);

  async function keychain<T>(
    name: string,
    op: (entry: KeyringEntry, signal: AbortSignal) => Promise<T>,
  ): Promise<{ value: T } | undefined> {
    if (unusable) return undefined;
    try {
      const { AsyncEntry } = await loadKeyring();
      // Pinned to the Secret Service on Linux: the library's fallback, the kernel keyring, is emptied at logout.
      const entry = new AsyncEntry(SERVICE, name, { linux: { store: 'secret-service' } });
      return { value: await op(entry, AbortSignal.timeout(KEYCHAIN_TIMEOUT_MS)) };
    } catch (err) {
      const why = (String((err as Error)?.message ?? err).split('\n')[0] ?? '')
        .replace(/^Platform failure: /, '')
        .slice(0, 160);
      if (choice === 'keychain') {
        throw new Error(
          `the OS keychain is not usable here (${why}); unset SVC_CREDENTIAL_STORE to keep secrets in a file instead`,
        );
      }
      unusable = why;
      return undefined;
    }
  }

  async function readFileStore(): Promise<Record<string, string>> {
    try {
      return JSON.parse(await readFile(file, 'utf8')) as Record<string, string>;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return {};
      throw new Error(`cannot read the credential file ${file}: ${(err as Error).message}`);
    }
  }

  /** Read-modify-write of the file under a lock, written to a 0600 temporary file and renamed over it. */
  async function updateFileStore(change: (secrets: Record<string, string>) => boolean): Promise<void> {
    await ensureDir();
    await withFileLock(join(dir, 'credentials.lock'), async () => {
      const before = await readFileStore().catch(() => ({}));
      const existed = await readFile(file).then(
        () => true,
        () => false,
      );
      if (!change(before) && existed) return;
      const tmp = `${file}.${process.pid}.tmp`;
      await writeFile(tmp, `${JSON.stringify(before, null, 2)}\n`, { mode: 0o600 });
      await chmod(tmp, 0o600);
      await rename(tmp, file);
      if (!existed && choice !== 'file') {
        o.notice(
          `no usable OS keychain here (${unusable}); secrets are kept in ${file}, readable only by you (SVC_CREDENTIAL_STORE=file chooses this without trying the keychain)`,
        );
      }
    });
  }

  return {
    dir,
    ensureDir,
    async get(name) {
      const k = await keychain(name, (e, signal) => e.getPassword(signal));
      if (k?.value) return k.value;
      // Also where the keychain was missing once: a secret saved then is in the file.
      return (await readFileStore())[name];
    },
    async set(name, value) {
      const k = await keychain(name, (e, signal) => e.setPassword(value, signal));
      if (k) {
        // The keychain has it now; an older copy in the file must not be found instead.
        if ((await readFileStore())[name] !== undefined) await updateFileStore((s) => delete s[name]);
        return;
      }
      await updateFileStore((s) => {
        s[name] = value;
        return true;
      });
    },
    async delete(name) {
      await keychain(name, (e, signal) => e.deletePassword(signal));
      if ((await readFileStore())[name] !== undefined) await updateFileStore((s) => delete s[name]);
    },
    async where() {
      await keychain('probe', (e, signal) => e.getPassword(signal));
      if (!unusable) return { kind: 'keychain', location: 'the OS keychain (service "svc")' };
      return {
        kind: 'file',
        location: file,
        reason: choice === 'file' ? 'chosen with SVC_CREDENTIAL_STORE=file' : `no usable keychain: ${unusable}`,
      };
    },
  };
}
