// What a command runs with: what every command needs — its IO, the global options it prints by, the profile — and
// lazily built dependencies: the profile's config, the credential store, the base URL, the API client. Nothing heavy
// is loaded until a command asks for it, so `svc --version` loads none of it and `svc emails send` with SVC_API_KEY
// never opens the config or the keychain. What only some commands use is built from the Context where it is used: the
// profile's session (profile-session.ts), the API key of the run (api-key.ts).
import type { Client, ClientOptions, RetryInfo } from '../client/index.js';
import { sleep } from '../client/backoff.js';
import { adminToken } from './admin-token.js';
import { apiKey, givenApiKey } from './api-key.js';
import {
  openConfig,
  profileName,
  resolveBaseUrl,
  type BaseUrlSource,
  type ConfigStore,
  type SessionInfo,
} from './config.js';
import { createCredentialStore, type CredentialStore } from './credentials.js';
import type { IO } from './io.js';
import type { LocalServer } from '../lib/local-servers.js';
import { defaultConfigDir } from './paths.js';
import { clientSessionStore } from './profile-session.js';
import { VERSION } from '../lib/version.js';

/** The options every command takes (defined on the program). */
export interface GlobalOptions {
  profile?: string;
  baseUrl?: string;
  apiKey?: string;
  adminToken?: string;
  json?: boolean;
  /** Tables on a terminal show whole values, however wide. */
  wide?: boolean;
  retries?: number;
  /** `-q`: a command that makes something prints only its id (or key, or code), and no success lines. */
  quiet?: boolean;
  /** Say each retry on stderr, also when it is not a terminal. */
  verbose?: boolean;
}

/**
 * This machine's time as commands see it: the time now, and waits (`domains verify --wait`, retries) through it, so
 * tests need not wait them out. Not the service clock (lib/clock.ts), which a local server's `--clock manual` moves.
 */
export interface WallClock {
  now(): number;
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

export const wallClock: WallClock = { now: () => Date.now(), sleep };

export interface Context {
  readonly io: IO;
  /** --json: print exactly the API's body. */
  readonly json: boolean;
  /** -q: print only what was made (its id, key or code), and no success lines. */
  readonly quiet: boolean;
  readonly profile: string;
  readonly configDir: string;
  readonly clock: WallClock;
  /** --api-key as given (api-key.ts weighs it against SVC_API_KEY and the profile's key). */
  readonly apiKeyFlag: string | undefined;
  config(): Promise<ConfigStore>;
  credentials(): CredentialStore;
  /** The run's base URL; `server`: the running local server it was found at (source `local`). */
  baseUrl(): Promise<BaseUrl>;
  client(): Promise<Client>;
  /** The session this run's client forgot because the service refused to refresh it, if it did (reset.ts). */
  endedSession(): SessionInfo | undefined;
}

export interface BaseUrl {
  url: string;
  source: BaseUrlSource;
  server?: LocalServer;
}

export interface ContextOptions {
  io: IO;
  globals: GlobalOptions;
  clock?: WallClock;
  /** Extra client options (tests: an undici MockAgent as dispatcher). */
  client?: Partial<ClientOptions>;
}

export function createContext(o: ContextOptions): Context {
  const { globals } = o;
  // --wide: tables are as wide as their values, whatever the terminal's width.
  const io: IO = globals.wide ? { ...o.io, columns: undefined } : o.io;
  const env = io.env;
  const profile = profileName(globals.profile, env);
  const configDir = defaultConfigDir(env);
  const clock = o.clock ?? wallClock;

  let config: Promise<ConfigStore> | undefined;
  let credentials: CredentialStore | undefined;
  let baseUrl: Promise<BaseUrl> | undefined;
  let client: Promise<Client> | undefined;
  let ended: SessionInfo | undefined;

  const ctx: Context = {
    io,
    json: Boolean(globals.json),
    quiet: Boolean(globals.quiet),
    profile,
    configDir,
    clock,
    apiKeyFlag: globals.apiKey,
    config: () => (config ??= openConfig(configDir)),
    credentials: () =>
      (credentials ??= createCredentialStore({
        configDir,
        env,
        notice: (m) => io.info(`${io.err.yellow('note:')} ${m}`),
      })),
    baseUrl: () =>
      (baseUrl ??= resolveBaseUrl(globals.baseUrl, env, async () => (await ctx.config()).profile(profile)).then(
        async (given): Promise<BaseUrl> => {
          if (given.source !== 'default') return given;
          const { discoverLocalServer } = await import('./discover.js');
          const found = await discoverLocalServer(io, env, { quiet: globals.quiet });
          return found ? { ...found, source: 'local' } : given;
        },
      )),
    client: () => (client ??= makeClient()),
    endedSession: () => ended,
  };

  async function makeClient(): Promise<Client> {
    const { url } = await ctx.baseUrl();
    const { createClient } = await import('../client/index.js');
    return createClient({
      baseUrl: url,
      apiKey: apiKey(ctx).checked,
      // A key given for this run wins over the session; a key saved in the profile comes after it.
      prefer: givenApiKey(ctx) ? 'key' : 'session',
      session: clientSessionStore(ctx, (info) => {
        ended = info;
      }),
      adminToken: () => adminToken(url, globals.adminToken, env),
      retries: globals.retries,
      userAgent: `svc/${VERSION} node/${process.versions.node}`,
      sleep: clock.sleep,
      // Said on a terminal (a send through two 503s would otherwise seem to hang), and with --verbose anywhere.
      onRetry: globals.verbose || (io.stderrIsTTY && !globals.quiet) ? (r) => io.info(retryLine(io, r)) : undefined,
      ...o.client,
    });
  }

  return ctx;
}

/** `note: POST /v1/emails answered 503 (unavailable); retry 1 of 3 in 0.4 s` */
function retryLine(io: IO, r: RetryInfo): string {
  const url = new URL(r.url);
  const what =
    r.status !== undefined
      ? `${r.method} ${url.pathname} answered ${r.status}${r.code ? ` (${r.code})` : ''}`
      : `${r.method} ${url.origin}${url.pathname} failed (${r.code ?? 'no answer'})`;
  return `${io.err.dim('note:')} ${what}; retry ${r.retry} of ${r.retries} in ${(r.delayMs / 1000).toFixed(1)} s`;
}
