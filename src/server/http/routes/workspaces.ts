// The sandbox's invites and workspaces (docs/local-server.md#sandbox-routes): an admin makes them, core keeps them.
import type { Core } from '../../core/index.js';
import type { Handlers } from '../handlers.js';

export function workspaceRoutes(
  core: Core,
): Pick<
  Handlers,
  'createInvite' | 'createSandboxWorkspace' | 'suspendWorkspace' | 'activateWorkspace' | 'closeWorkspace'
> {
  const { accounts } = core;
  return {
    createInvite: ({ body }) => ({ body: accounts.createInvite(body) }),
    createSandboxWorkspace: ({ body }) => ({ body: accounts.addWorkspace(body.email, body.name, body.role) }),
    suspendWorkspace: ({ params }) => ({ body: accounts.setWorkspaceStatus(params.id!, 'suspended') }),
    activateWorkspace: ({ params }) => ({ body: accounts.setWorkspaceStatus(params.id!, 'active') }),
    closeWorkspace: ({ params }) => ({ body: accounts.setWorkspaceStatus(params.id!, 'closed') }),
  };
}
