import type { Core } from '../../core/index.js';
import type { Handlers } from '../handlers.js';

export function authRoutes(
  core: Core,
): Pick<
  Handlers,
  | 'signup'
  | 'login'
  | 'refreshSession'
  | 'logout'
  | 'getMe'
  | 'revokeAllSessions'
  | 'verifyEmail'
  | 'resendVerification'
> {
  const { accounts } = core;
  return {
    signup: async ({ body, ip }) => ({ body: await accounts.signup(body, ip) }),
    login: async ({ body, ip }) => ({ body: await accounts.login(body, ip) }),
    refreshSession: async ({ body }) => ({ body: await accounts.refresh(body) }),
    logout: ({ body }) => accounts.logout(body.refresh_token),
    getMe: ({ caller }) => ({ body: accounts.me(caller.principal.userId, caller.principal.workspaceId) }),
    revokeAllSessions: ({ caller }) => ({ body: accounts.revokeAll(caller.principal.userId) }),
    verifyEmail: ({ body }) => ({ body: accounts.verifyEmail(body.token) }),
    resendVerification: ({ caller }) => ({ body: accounts.resendVerification(caller.principal.userId) }),
  };
}
