import * as z from 'zod';
import { lazySchema } from './lazy.js';
import { Id, Timestamp } from './common.js';

export const Role = lazySchema(() => z.enum(['owner', 'admin', 'member']));
export type Role = z.infer<typeof Role>;
export const WorkspaceStatus = lazySchema(() => z.enum(['active', 'suspended', 'closed']));

export const User = lazySchema(() =>
  z.object({
    id: z.string(),
    email: z.string(),
    name: z.string().optional(),
    role: Role.optional(),
    email_verified: z.boolean(),
  }),
);
export type User = z.infer<typeof User>;

export const Workspace = lazySchema(() =>
  z.object({
    id: z.string(),
    name: z.string(),
    slug: z.string(),
    role: Role,
    status: WorkspaceStatus,
  }),
);
export type Workspace = z.infer<typeof Workspace>;

export const Session = lazySchema(() =>
  z.object({
    access_token: z.string(),
    refresh_token: z.string(),
    expires_at: Timestamp,
    user: User,
    workspace: Workspace.optional(),
    workspaces: z.array(Workspace),
  }),
);
export type Session = z.infer<typeof Session>;

const Email = lazySchema(() => z.email().max(254));

export const SignupRequest = lazySchema(() =>
  z.strictObject({
    email: Email,
    password: z.string().max(1024),
    workspace_name: z.string().trim().min(1).max(128),
    // No length rule: any wrong code gets the same 403 as a missing one.
    invite_code: z.string().optional(),
    name: z.string().max(128).optional(),
    locale: z.string().max(35).optional(),
  }),
);

// No format or length rules at login: a wrong value is just a bad login (401), never a 422.
export const LoginRequest = lazySchema(() =>
  z.strictObject({
    email: z.string(),
    password: z.string(),
    workspace_id: Id('ws').optional(),
  }),
);

// No length rule on refresh_token: a token of any length that is not one we issued is simply unknown,
// which refresh answers with 401 and logout with 204 (never 422; docs/api.md#accounts-sessions-and-workspaces).
export const RefreshRequest = lazySchema(() =>
  z.strictObject({
    refresh_token: z.string(),
    workspace_id: Id('ws').optional(),
  }),
);

export const LogoutRequest = lazySchema(() => z.strictObject({ refresh_token: z.string() }));

export const MeResponse = lazySchema(() => z.object({ user: User, workspace: Workspace.optional() }));

export const RevokeAllResponse = lazySchema(() =>
  z.object({
    revoked: z.number().int(),
    access_tokens_valid_until: Timestamp,
    note: z.string(),
  }),
);

export const VerifyEmailRequest = lazySchema(() => z.strictObject({ token: z.string() }));
export const VerifyEmailResponse = lazySchema(() =>
  z.object({ verified: z.boolean(), email: z.string(), note: z.string() }),
);
export const ResendVerificationResponse = lazySchema(() => z.object({ sent: z.boolean(), note: z.string() }));
