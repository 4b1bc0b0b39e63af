import { z } from 'zod';
import { Id, Timestamp } from './common.js';

export const Role = z.enum(['owner', 'admin', 'member']);
export type Role = z.infer<typeof Role>;
export const WorkspaceStatus = z.enum(['active', 'suspended', 'closed']);

export const User = z.object({
  id: z.string(),
  email: z.string(),
  name: z.string().optional(),
  role: Role.optional(),
  email_verified: z.boolean(),
});
export type User = z.infer<typeof User>;

export const Workspace = z.object({
  id: z.string(),
  name: z.string(),
  slug: z.string(),
  role: Role,
  status: WorkspaceStatus,
});
export type Workspace = z.infer<typeof Workspace>;

export const Session = z.object({
  access_token: z.string(),
  refresh_token: z.string(),
  expires_at: Timestamp,
  user: User,
  workspace: Workspace.optional(),
  workspaces: z.array(Workspace),
});
export type Session = z.infer<typeof Session>;

const Email = z.email().max(254);

export const SignupRequest = z.strictObject({
  email: Email,
  password: z.string().max(1024),
  workspace_name: z.string().trim().min(1).max(128),
  // No length rule: any wrong code gets the same 403 as a missing one.
  invite_code: z.string().optional(),
  name: z.string().max(128).optional(),
  locale: z.string().max(35).optional(),
});

// No format or length rules at login: a wrong value is just a bad login (401), never a 422.
export const LoginRequest = z.strictObject({
  email: z.string(),
  password: z.string(),
  workspace_id: Id('ws').optional(),
});

// No length rule on refresh_token: a token of any length that is not one we issued is simply unknown,
// which refresh answers with 401 and logout with 204 (never 422; §4 Accounts rules 3 and 5).
export const RefreshRequest = z.strictObject({
  refresh_token: z.string(),
  workspace_id: Id('ws').optional(),
});

export const LogoutRequest = z.strictObject({ refresh_token: z.string() });

export const MeResponse = z.object({ user: User, workspace: Workspace.optional() });

export const RevokeAllResponse = z.object({
  revoked: z.number().int(),
  access_tokens_valid_until: Timestamp,
  note: z.string(),
});

export const VerifyEmailRequest = z.strictObject({ token: z.string() });
export const VerifyEmailResponse = z.object({ verified: z.boolean(), email: z.string(), note: z.string() });
export const ResendVerificationResponse = z.object({ sent: z.boolean(), note: z.string() });
