// What a command runs with: its IO, the global options, and lazily built dependencies — the profile's config,
// the credential store, the API client. Nothing heavy is loaded until a command asks for it, so `svc --version`
// loads none of it and `svc emails send` with SVC_API_KEY never opens the config or the keychain.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Client, ClientOptions, RetryInfo, SessionStore, SessionTokens } from '../client/index.js';
import { isLoopbackHost, parseBaseUrl } from '../client/base-url.js';
import { ACCESS_TOKEN_PATTERN, API_KEY_PATTERN } from '../contract/ids.js';
import { sleep } from '../client/backoff.js';
import {
  openConfig,
  profileName,
  resolveBaseUrl,
  type BaseUrlSource,
  type ConfigStore,
  type SavedKeyInfo,
  type SessionInfo,
} from './config.js';
import { createCredentialStore, type CredentialStore } from './credentials.js';
import { AuthError } from './errors.js';
import type { IO } from './io.js';
import type { LocalServer } from '../lib/local-servers.js';
import { withFileLock } from './lock.js';
import { defaultConfigDir, defaultDataDir } from './paths.js';
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

/** Time as commands see it: waits (`domains verify --wait`) go through it, so tests need not wait them out. */
export interface Clock {
  now(): number;
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

export const realClock: Clock = { now: () => Date.now(), sleep };

export type ApiKeySource = 'flag' | 'env' | 'profile';

export interface Context {
  readonly io: IO;
  /** --json: print exactly the API's body. */
  readonly json: boolean;
  /** -q: print only what was made (its id, key or code), and no success lines. */
  readonly quiet: boolean;
  readonly profile: string;
  readonly configDir: string;
  readonly clock: Clock;
  config(): Promise<ConfigStore>;
  credentials(): CredentialStore;
  /** The run's base URL; `server`: the running local server it was found at (source `local`). */
  baseUrl(): Promise<BaseUrl>;
  client(): Promise<Client>;
  /** Where the API key of this run comes from, if there is one. */
  apiKeySource(): Promise<ApiKeySource | undefined>;
  /** The API key of this run: --api-key, else SVC_API_KEY, else the profile's saved key for this base URL. */
  apiKey(): Promise<string | undefined>;
  /**
   * The API key of this run, refused (AuthError, naming where it came from) when it is not an svc key: sent nowhere,
   * rather than answered by the service as an invalid token.
   */
  checkedApiKey(): Promise<string | undefined>;
  /** The profile's session, when it was issued by this run's base URL. */
  session(): Promise<SessionInfo | undefined>;
  /** Keeps a session just issued (login, signup, a workspace switch): its tokens at once, then what the profile shows. */
  saveSession(info: SessionInfo, tokens: SessionTokens): Promise<void>;
  /** Forgets the profile's session (its tokens and what the profile shows). */
  forgetSession(): Promise<void>;
  /** The session tokens as stored now (for logout). */
  sessionTokens(): Promise<SessionTokens | undefined>;
  /** Runs `fn` holding the lock every svc process takes to rotate this profile's session. */
  withSessionLock<T>(fn: () => Promise<T>): Promise<T>;
  /** Saves an API key in the profile (`keys create --save`), so sending needs no flag. */
  saveApiKey(info: SavedKeyInfo, key: string): Promise<void>;
  /** Forgets the profile's saved API key. */
  forgetApiKey(): Promise<void>;
  /** The session this run forgot because the service refused to refresh it, if it did. */
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
  clock?: Clock;
  /** Extra client options (tests: an undici MockAgent as dispatcher). */
  client?: Partial<ClientOptions>;
}

const SESSION = 'session';
const API_KEY = 'api_key';

export function createContext(o: ContextOptions): Context {
  const { globals } = o;
  // --wide: tables are as wide as their values, whatever the terminal's width.
  const io: IO = globals.wide ? { ...o.io, columns: undefined } : o.io;
  const env = io.env;
  const profile = profileName(globals.profile, env);
  const configDir = defaultConfigDir(env);
  const clock = o.clock ?? realClock;
  const secret = (name: string) => `${profile}/${name}`;

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

    async apiKeySource() {
      if (globals.apiKey) return 'flag';
      if (env.SVC_API_KEY) return 'env';
      const saved = (await ctx.config()).profile(profile).api_key;
      return saved && saved.base_url === (await ctx.baseUrl()).url ? 'profile' : undefined;
    },

    async apiKey() {
      const explicit = globals.apiKey ?? env.SVC_API_KEY;
      if (explicit) return explicit;
      return (await ctx.apiKeySource()) === 'profile' ? ctx.credentials().get(secret(API_KEY)) : undefined;
    },

    async checkedApiKey() {
      const key = await ctx.apiKey();
      if (key === undefined || API_KEY_PATTERN.test(key) || ACCESS_TOKEN_PATTERN.test(key)) return key;
      const source = await ctx.apiKeySource();
      const where = source === 'flag' ? '--api-key' : source === 'env' ? 'SVC_API_KEY' : `profile ${profile}`;
      const shown = `${key.slice(0, Math.min(6, Math.floor(key.length / 2)))}…`;
      const create = '`svc keys create --name NAME --scope emails:send`';
      throw new AuthError(
        `${shown} (${where}) is not an svc API key (they start with svc_test_ or svc_live_, then 32 letters and digits)`,
        source === 'flag'
          ? `give --api-key a key ${create} printed, or leave it out to use the profile's`
          : source === 'env'
            ? `set SVC_API_KEY to a key ${create} printed, or unset it to use the profile's`
            : `save another with ${create.slice(0, -1)} --save\``,
      );
    },

    async session() {
      const info = (await ctx.config()).profile(profile).session;
      // A session is only ever sent to the service that issued it.
      return info && info.base_url === (await ctx.baseUrl()).url ? info : undefined;
    },

    async saveSession(info, tokens) {
      await ctx.credentials().set(secret(SESSION), JSON.stringify(tokens));
      (await ctx.config()).updateProfile(profile, (p) => ({ ...p, base_url: info.base_url, session: info }));
    },

    async forgetSession() {
      await ctx.credentials().delete(secret(SESSION));
      (await ctx.config()).updateProfile(profile, ({ session: _gone, ...rest }) => rest);
    },

    async sessionTokens() {
      if (!(await ctx.session())) return undefined;
      const raw = await ctx.credentials().get(secret(SESSION));
      return raw ? (JSON.parse(raw) as SessionTokens) : undefined;
    },

    async withSessionLock(fn) {
      const dir = await ctx.credentials().ensureDir();
      return withFileLock(join(dir, `${profile}.refresh.lock`), fn);
    },

    async saveApiKey(info, key) {
      await ctx.credentials().set(secret(API_KEY), key);
      (await ctx.config()).updateProfile(profile, (p) => ({
        ...p,
        base_url: p.base_url ?? info.base_url,
        api_key: info,
      }));
    },

    async forgetApiKey() {
      await ctx.credentials().delete(secret(API_KEY));
      (await ctx.config()).updateProfile(profile, ({ api_key: _gone, ...rest }) => rest);
    },

    endedSession: () => ended,
  };

  /** The session as the client sees it: read from the credential store on every call, rotated under a file lock. */
  const sessionStore: SessionStore = {
    load: async () => (await ctx.sessionTokens()) ?? null,
    save: (tokens) => ctx.credentials().set(secret(SESSION), JSON.stringify(tokens)),
    async clear() {
      ended = await ctx.session();
      await ctx.forgetSession();
    },
    withLock: (fn) => ctx.withSessionLock(fn),
  };

  /**
   * The admin token of the sandbox routes: `--admin-token`, else SVC_ADMIN_TOKEN, else — for a loopback base URL — the
   * token of the local server registered at that address (any port, any data directory), else the `admin-token` file
   * of the default data directory. Without one, says which to set rather than asking the server without a token.
   */
  async function adminToken(url: string): Promise<string> {
    const given = globals.adminToken || env.SVC_ADMIN_TOKEN;
    if (given) return given;
    const set = 'set SVC_ADMIN_TOKEN (or pass --admin-token) to the admin_token of the ready line `svc serve` printed';
    const parsed = parseBaseUrl(url);
    if (!parsed || !isLoopbackHost(parsed.hostname)) throw new AuthError(`no admin token for ${url}`, set);
    const { findLocalServer } = await import('../lib/local-servers.js');
    const registered = findLocalServer(url, env);
    if (registered) return registered.admin_token;
    const file = join(defaultDataDir(env), 'admin-token');
    const token = (await readFile(file, 'utf8').catch(() => '')).trim();
    if (token) return token;
    throw new AuthError(
      `no admin token for ${url}: no svc serve on this machine is registered at that address, and ${file} does not exist`,
      `start one with \`svc serve\`, or ${set}`,
    );
  }

  async function makeClient(): Promise<Client> {
    const { url } = await ctx.baseUrl();
    // fetch parses HTTP with WebAssembly, which V8 compiles quickly for a first tier, then again, optimised, on a
    // background thread once it runs hot — and a process cannot end while that compilation runs, after a command's
    // answer was printed (bench/README.md, bench:cli-start). A command's few answers are read as fast by the first
    // tier: stay with it. The flag goes on only once fetch's own code is loaded (reading Response loads it; TLS too,
    // for https): after any V8 flag changes, Node compiles the built-in modules it loads afresh instead of taking the
    // compiled code it ships.
    void globalThis.Response;
    if (url.startsWith('https:')) process.getBuiltinModule('node:tls');
    process.getBuiltinModule('node:v8').setFlagsFromString('--liftoff-only');
    const { createClient } = await import('../client/index.js');
    const explicitKey = globals.apiKey ?? env.SVC_API_KEY;
    return createClient({
      baseUrl: url,
      apiKey: ctx.checkedApiKey,
      // A key given for this run wins over the session; a key saved in the profile comes after it.
      prefer: explicitKey ? 'key' : 'session',
      session: sessionStore,
      adminToken: () => adminToken(url),
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

/** `note: POST /v1/emails answered 503 (service_unavailable); retry 1 of 3 in 0.4 s` */
function retryLine(io: IO, r: RetryInfo): string {
  const url = new URL(r.url);
  const what =
    r.status !== undefined
      ? `${r.method} ${url.pathname} answered ${r.status}${r.code ? ` (${r.code})` : ''}`
      : `${r.method} ${url.origin}${url.pathname} failed (${r.code ?? 'no answer'})`;
  return `${io.err.dim('note:')} ${what}; retry ${r.retry} of ${r.retries} in ${(r.delayMs / 1000).toFixed(1)} s`;
}
