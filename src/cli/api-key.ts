// The API key of a run: --api-key, else SVC_API_KEY, else the key saved in the profile (`keys create --save`) for this
// run's base URL, the secret `<profile>/api_key` of the credential store. Built from the Context where keys are used:
// the Context's client, `keys create --save`, `keys revoke`, doctor, whoami, smtp, and the reset explanation.
import { ACCESS_TOKEN_PATTERN, API_KEY_PATTERN } from '../contract/ids.js';
import type { ConfigStore, SavedKeyInfo } from './config.js';
import type { CredentialStore } from './credentials.js';
import { AuthError } from './errors.js';
import type { Env } from './io.js';

export type ApiKeySource = 'flag' | 'env' | 'profile';

export interface ApiKey {
  /** Where the API key of this run comes from, if there is one. */
  source(): Promise<ApiKeySource | undefined>;
  /** The API key of this run. */
  get(): Promise<string | undefined>;
  /**
   * The API key of this run, refused (AuthError, naming where it came from) when it is not an svc key: sent nowhere,
   * rather than answered by the service as an invalid token.
   */
  checked(): Promise<string | undefined>;
  /** What the profile shows of its saved key, whichever base URL it is for. */
  saved(): Promise<SavedKeyInfo | undefined>;
  /** Saves an API key in the profile (`keys create --save`), so sending needs no flag. */
  save(info: SavedKeyInfo, key: string): Promise<void>;
  /** Forgets the profile's saved API key. */
  forget(): Promise<void>;
}

/** What the key is looked up with: the Context's (context.ts). */
export interface KeyContext {
  readonly io: { env: Env };
  readonly profile: string;
  /** --api-key as given. */
  readonly apiKeyFlag: string | undefined;
  config(): Promise<ConfigStore>;
  credentials(): CredentialStore;
  baseUrl(): Promise<{ url: string }>;
}

/** The key given for this run alone: --api-key, else SVC_API_KEY. */
export const givenApiKey = (ctx: KeyContext): string | undefined => ctx.apiKeyFlag ?? ctx.io.env.SVC_API_KEY;

export function apiKey(ctx: KeyContext): ApiKey {
  const { profile } = ctx;
  const secret = `${profile}/api_key`;

  const key: ApiKey = {
    async source() {
      if (ctx.apiKeyFlag) return 'flag';
      if (ctx.io.env.SVC_API_KEY) return 'env';
      const saved = await key.saved();
      return saved && saved.base_url === (await ctx.baseUrl()).url ? 'profile' : undefined;
    },

    async get() {
      const given = givenApiKey(ctx);
      if (given) return given;
      return (await key.source()) === 'profile' ? ctx.credentials().get(secret) : undefined;
    },

    async checked() {
      const value = await key.get();
      if (value === undefined || API_KEY_PATTERN.test(value) || ACCESS_TOKEN_PATTERN.test(value)) return value;
      const source = await key.source();
      const where = source === 'flag' ? '--api-key' : source === 'env' ? 'SVC_API_KEY' : `profile ${profile}`;
      const shown = `${value.slice(0, Math.min(6, Math.floor(value.length / 2)))}…`;
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

    saved: async () => (await ctx.config()).profile(profile).api_key,

    async save(info, value) {
      await ctx.credentials().set(secret, value);
      (await ctx.config()).updateProfile(profile, (p) => ({
        ...p,
        base_url: p.base_url ?? info.base_url,
        api_key: info,
      }));
    },

    async forget() {
      await ctx.credentials().delete(secret);
      (await ctx.config()).updateProfile(profile, ({ api_key: _gone, ...rest }) => rest);
    },
  };
  return key;
}
