// Profiles: what svc remembers between runs that is not secret (base URL, who is signed in, which key is saved),
// in `config.json` of the config directory through `conf`. Secrets themselves live in the credential store.
import { mkdir } from 'node:fs/promises';
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
}

/** The API key saved in a profile (`keys create --save`); the key is the secret `<profile>/api_key`. */
export interface SavedKeyInfo {
  base_url: string;
  id: string;
  prefix: string;
  mode: string;
}

export interface Profile {
  /** The base URL of this profile, set by `login`, `signup` and `keys create --save`. */
  base_url?: string;
  session?: SessionInfo;
  api_key?: SavedKeyInfo;
}

interface ConfigFile extends Record<string, unknown> {
  profiles: Record<string, Profile>;
}

export interface ConfigStore {
  readonly path: string;
  profile(name: string): Profile;
  updateProfile(name: string, change: (p: Profile) => Profile): void;
}

/** Opens `config.json` in `dir` (created 0700; the file 0600). `conf` is loaded here, only by commands that need it. */
export async function openConfig(dir: string): Promise<ConfigStore> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const { default: Conf } = await import('conf');
  const conf = new Conf<ConfigFile>({
    cwd: dir,
    configName: 'config',
    configFileMode: 0o600,
    // Profile names may hold dots; every key is a plain key.
    accessPropertiesByDotNotation: false,
    defaults: { profiles: {} },
  });
  return {
    path: conf.path,
    profile: (name) => conf.get('profiles')[name] ?? {},
    updateProfile(name, change) {
      const profiles = { ...conf.get('profiles') };
      profiles[name] = change(profiles[name] ?? {});
      conf.set('profiles', profiles);
    },
  };
}

/** `--profile`, else SVC_PROFILE, else `default`. Names become keychain accounts and file names: kept simple. */
export function profileName(flag: string | undefined, env: Env): string {
  const name = flag ?? (env.SVC_PROFILE || DEFAULT_PROFILE);
  if (!/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/.test(name)) {
    throw new UsageError(`"${name}" is not a profile name`, 'use letters, digits, ".", "_" and "-" (up to 64), e.g. --profile staging');
  }
  return name;
}

export type BaseUrlSource = 'flag' | 'env' | 'profile' | 'default';

/** cli.md: `--base-url`, else SVC_BASE_URL, else the profile's, else the local server's. */
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
