import * as z from 'zod';
import { lazySchema } from './lazy.js';
import { Id, InputTimestamp, Timestamp } from './common.js';

export const SCOPES = [
  'emails:send',
  'emails:read',
  'domains:read',
  'domains:write',
  'contacts:write',
  'campaigns:write',
  'templates:read',
  'webhooks:write',
  'analytics:read',
] as const;
export const Scope = lazySchema(() => z.enum(SCOPES));
export type Scope = z.infer<typeof Scope>;

export const KeyMode = lazySchema(() => z.enum(['live', 'test']));
export type KeyMode = z.infer<typeof KeyMode>;

/** `svc_live_` or `svc_test_` + 32 base62 characters. */
export const API_KEY_PATTERN = /^svc_(live|test)_[0-9A-Za-z]{32}$/;
export const KEY_PREFIX_LENGTH = 13;

export const ApiKey = lazySchema(() =>
  z.object({
    id: z.string(),
    name: z.string(),
    prefix: z.string(),
    reveal: z.string(),
    mode: KeyMode,
    scopes: z.array(Scope),
    domain_id: z.string().nullable(),
    ip_allowlist: z.array(z.string()),
    created_at: Timestamp,
    last_used_at: Timestamp.nullable(),
    expires_at: Timestamp.nullable(),
    revoked_at: Timestamp.nullable(),
    revoked: z.boolean(),
  }),
);
export type ApiKey = z.infer<typeof ApiKey>;

export const CreatedApiKey = lazySchema(() => ApiKey.extend({ key: z.string() }));
export type CreatedApiKey = z.infer<typeof CreatedApiKey>;

export const CreateApiKeyRequest = lazySchema(() =>
  z.strictObject({
    name: z.string().min(1).max(128),
    scopes: z
      .array(Scope)
      .min(1)
      .max(SCOPES.length * 4),
    mode: KeyMode.optional(),
    domain_id: Id('dom').optional(),
    ip_allowlist: z.array(z.string().max(64)).max(100).optional(),
    expires_at: InputTimestamp.optional(),
  }),
);
export type CreateApiKeyRequest = z.infer<typeof CreateApiKeyRequest>;
