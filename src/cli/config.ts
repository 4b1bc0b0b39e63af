// Profiles: what svc remembers between runs that is not secret (base URL, who is signed in, which key is saved),
// in `config.json` of the config directory. Secrets themselves live in the credential store.
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writePrivateFile } from '../lib/private-file.js';
import { UsageError } from './errors.js';
import type { Env } from './io.js';

export const DEFAULT_BASE_URL = 'http://127.0.0.1:4010/v1';
export const DEFAULT_PROFILE = 'default';

/** The signed-in session of a profile; its tokens are the secret `<profile>/session`. */
export interface SessionInfo {
  /** The service that issued it: its tokens are never sent anywhere else. */
  base_url: string;
  user: { id: string; email: string };
  workspace?: { id: string; name: string; slug: string; role: string };
  /** The local server's instance it was issued by (its Svc-Sandbox-Instance header), to tell a reset later. */
  sandbox_instance?: string;
}

/** The API key saved in a profile (`keys create --save`); the key is the secret `<profile>/api_key`. */
export interface SavedKeyInfo {
  base_url: string;
  id: string;
  prefix: string;
  mode: string;
  /** As for a session: the local server's instance that made the key. */
  sandbox_instance?: string;
}

export interface Profile {
  /** The base URL of this profile, set by `login`, `signup` and `keys create --save`. */
  base_url?: string;
  session?: SessionInfo;
  api_key?: SavedKeyInfo;
}

interface ConfigFile {
  profiles: Record<string, Profile>;
}

export interface ConfigStore {
  readonly path: string;
  profile(name: string): Profile;
  updateProfile(name: string, change: (p: Profile) => Profile): void;
}

/**
 * The profiles in `config.json` of `dir`. Reading never creates anything: a run that only reads (a send from CI with
 * SVC_API_KEY) leaves the disk as it found it. The first change creates the directory (0700) and the file (0600),
 * written whole to a temporary file and renamed over the old one, so a reader never sees half of it. The file is read
 * again for every look and before every change, as another svc process may have changed it meanwhile.
 *
 * A plain JSON file rather than a configuration library: the one it replaced installed process-wide SIGINT and SIGTERM
 * hooks that killed the process again after a long-running command had handled the signal (exit 130, not 0).
 */
export async function openConfig(dir: string): Promise<ConfigStore> {
  const path = join(dir, 'config.json');
  const read = (): ConfigFile => {
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { profiles: {} };
      throw err;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (err) {
      throw new Error(
        `cannot read ${path}: ${(err as Error).message}; fix or delete it (it holds profiles, not secrets)`,
      );
    }
    const file = (parsed ?? {}) as Partial<ConfigFile>;
    return { ...file, profiles: typeof file.profiles === 'object' && file.profiles ? file.profiles : {} };
  };
  return {
    path,
    profile: (name) => read().profiles[name] ?? {},
    updateProfile(name, change) {
      const file = read();
      const next: ConfigFile = { ...file, profiles: { ...file.profiles, [name]: change(file.profiles[name] ?? {}) } };
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      writePrivateFile(path, JSON.stringify(next, null, '\t'));
    },
  };
}

/** `--profile`, else SVC_PROFILE, else `default`. Names become keychain accounts and file names: kept simple. */
export function profileName(flag: string | undefined, env: Env): string {
  const name = flag ?? (env.SVC_PROFILE || DEFAULT_PROFILE);
  if (!/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/.test(name)) {
    throw new UsageError(
      `"${name}" is not a profile name`,
      'use letters, digits, ".", "_" and "-" (up to 64), e.g. --profile staging',
    );
  }
  return name;
}

/** Where a run's base URL came from; `local`: the one `svc serve` running, nothing answering at the default. */
export type BaseUrlSource = 'flag' | 'env' | 'profile' | 'default' | 'local';

/**
 * `--base-url`, else SVC_BASE_URL, else the profile's, else the local server's default address
 * (docs/command-line.md#base-url-profiles-and-credentials); the Context looks further than the default (discover.ts).
 */
export async function resolveBaseUrl(
  flag: string | undefined,
  env: Env,
  profile: () => Promise<Profile>,
): Promise<{ url: string; source: BaseUrlSource }> {
  if (flag) return { url: trim(flag), source: 'flag' };
  if (env.SVC_BASE_URL) return { url: trim(env.SVC_BASE_URL), source: 'env' };
  const fromProfile = (await profile()).base_url;
  if (fromProfile) return { url: trim(fromProfile), source: 'profile' };
  return { url: DEFAULT_BASE_URL, source: 'default' };
}

function trim(url: string): string {
  return url.trim().replace(/\/+$/, '');
}
