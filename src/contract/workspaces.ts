// Invites and workspaces a local server's admin makes (`/sandbox/invites`, `/sandbox/workspaces`), for `svc sandbox`.
import * as z from 'zod';
import { Role } from './auth.js';
import { InputTimestamp, Timestamp } from './common.js';
import { lazySchema } from './lazy.js';

export const CreateInviteRequest = lazySchema(() =>
  z.strictObject({
    max_uses: z.number().int().min(1).max(1_000_000).optional(),
    expires_at: InputTimestamp.optional(),
  }),
);
export const Invite = lazySchema(() =>
  z.object({ id: z.string(), code: z.string(), max_uses: z.number().int(), expires_at: Timestamp.nullable() }),
);

export const CreateSandboxWorkspaceRequest = lazySchema(() =>
  z.strictObject({
    email: z.email().max(254),
    name: z.string().trim().min(1).max(128),
    role: Role,
  }),
);
