import * as z from 'zod';
import { MessageChecks } from './checks.js';
import { lazySchema } from './lazy.js';
import { ATTACHMENT_BODY_LIMIT, Empty, listOf, listQuery, Problem } from './common.js';
import * as auth from './auth.js';
import * as keys from './keys.js';
import * as domains from './domains.js';
import * as emails from './emails.js';
import * as events from './events.js';
import * as workspaces from './workspaces.js';
import * as inbox from './inbox.js';
import * as clock from './clock.js';
import * as zone from './zone.js';
import * as webhooks from './webhook-endpoints.js';
import * as chaos from './chaos.js';
import { ChecksQuery } from './checks.js';
import type { Scope } from './keys.js';

/**
 * Which credential an operation takes (docs/api.md#authentication-and-credential-kinds): `admin` is a sandbox route
 * of a local server (docs/local-server.md#sandbox-routes), which takes its admin token.
 */
export type AuthKind = 'none' | 'session' | 'key' | 'either' | 'admin';

/** What every entry of the table gives. */
interface Operation {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  body?: z.ZodType;
  /** Largest request body in bytes; DEFAULT_BODY_LIMIT when not given. Checked before authentication. */
  maxBody?: number;
  query?: z.ZodType;
  /** Success status and body schema (`null` for no body). */
  success: readonly [number, z.ZodType | null];
}

/** A `/v1` operation, listed in the OpenAPI document. */
export interface V1Endpoint extends Operation {
  /** Relative to the base URL (`/v1`), with `:param` placeholders. */
  path: string;
  summary: string;
  auth: Exclude<AuthKind, 'admin'>;
  /** The operation acts on the credential's workspace (403 `workspace_required` without one). */
  workspace?: boolean;
  scope?: Scope;
  /** Lowest role allowed for a session; `owner` and `admin` manage, `member` reads. */
  role?: 'admin';
  /** How the body is described in the OpenAPI document when it differs from `body` (batch items validated one by one). */
  describedBody?: z.ZodType;
  /** Statuses of the Problem responses the operation can give. */
  errors: readonly number[];
}

/** A sandbox route of a local server (`svc serve`): outside `/v1` and its OpenAPI document, with the admin token. */
export interface AdminEndpoint extends Operation {
  /** From the server's origin (`/sandbox/…`), with `:param` placeholders. */
  path: string;
  auth: 'admin';
  /** A view of a caught message the inbox page opens by address: also admitted with its view token (`?view=`). */
  views?: true;
}

export type Endpoint = V1Endpoint | AdminEndpoint;

/** Whether an entry is a `/v1` operation (not a sandbox route). */
export const isV1 = (e: Endpoint): e is V1Endpoint => e.auth !== 'admin';

/**
 * The endpoint table: every `/v1` operation and every sandbox route, by the one name used in every layer; its schemas
 * are built on first use.
 */
export const endpoints = {
  signup: {
    method: 'POST',
    path: '/auth/signup',
    summary: 'Create an account and its first workspace',
    auth: 'none',
    body: auth.SignupRequest,
    success: [201, auth.Session],
    errors: [400, 403, 422, 429],
  },
  login: {
    method: 'POST',
    path: '/auth/login',
    summary: 'Sign in',
    auth: 'none',
    body: auth.LoginRequest,
    success: [200, auth.Session],
    errors: [400, 401, 403, 429],
  },
  refreshSession: {
    method: 'POST',
    path: '/auth/refresh',
    summary: 'Rotate a refresh token (optionally switching workspace)',
    auth: 'none',
    body: auth.RefreshRequest,
    success: [200, auth.Session],
    errors: [400, 401, 403],
  },
  logout: {
    method: 'POST',
    path: '/auth/logout',
    summary: 'End a session',
    auth: 'none',
    body: auth.LogoutRequest,
    success: [204, null],
    errors: [400],
  },
  getMe: {
    method: 'GET',
    path: '/auth/me',
    summary: 'The signed-in user',
    auth: 'session',
    success: [200, auth.MeResponse],
    errors: [401, 403],
  },
  revokeAllSessions: {
    method: 'POST',
    path: '/auth/sessions/revoke-all',
    summary: "Revoke all of the user's refresh tokens",
    auth: 'session',
    success: [200, auth.RevokeAllResponse],
    errors: [401, 403],
  },
  verifyEmail: {
    method: 'POST',
    path: '/auth/verify-email',
    summary: 'Confirm an email address',
    auth: 'none',
    body: auth.VerifyEmailRequest,
    success: [200, auth.VerifyEmailResponse],
    errors: [400, 422],
  },
  resendVerification: {
    method: 'POST',
    path: '/auth/resend-verification',
    summary: 'Send the verification email again',
    auth: 'session',
    success: [202, auth.ResendVerificationResponse],
    errors: [401, 403, 429],
  },
  listApiKeys: {
    method: 'GET',
    path: '/api-keys',
    summary: 'List API keys, newest first',
    auth: 'session',
    workspace: true,
    query: lazySchema(() => listQuery('key')),
    success: [200, lazySchema(() => listOf(keys.ApiKey))],
    errors: [400, 401, 403],
  },
  createApiKey: {
    method: 'POST',
    path: '/api-keys',
    summary: 'Create an API key (shown once)',
    auth: 'session',
    workspace: true,
    role: 'admin',
    body: keys.CreateApiKeyRequest,
    success: [201, keys.CreatedApiKey],
    errors: [400, 401, 403, 422],
  },
  revokeApiKey: {
    method: 'DELETE',
    path: '/api-keys/:id',
    summary: 'Revoke an API key',
    auth: 'session',
    workspace: true,
    role: 'admin',
    success: [204, null],
    errors: [401, 403, 404],
  },
  listDomains: {
    method: 'GET',
    path: '/domains',
    summary: 'List sending domains, newest first',
    auth: 'either',
    workspace: true,
    scope: 'domains:read',
    query: lazySchema(() => listQuery('dom')),
    success: [200, lazySchema(() => listOf(domains.Domain))],
    errors: [400, 401, 403],
  },
  createDomain: {
    method: 'POST',
    path: '/domains',
    summary: 'Add a domain; the response lists the DNS records to publish',
    auth: 'either',
    workspace: true,
    scope: 'domains:write',
    role: 'admin',
    body: domains.CreateDomainRequest,
    success: [201, domains.Domain],
    errors: [400, 401, 403, 422],
  },
  getDomain: {
    method: 'GET',
    path: '/domains/:id',
    summary: 'One domain',
    auth: 'either',
    workspace: true,
    scope: 'domains:read',
    success: [200, domains.Domain],
    errors: [401, 403, 404],
  },
  updateDomain: {
    method: 'PATCH',
    path: '/domains/:id',
    summary: 'Change purpose, MAIL FROM or tracking host; the record set is regenerated',
    auth: 'either',
    workspace: true,
    scope: 'domains:write',
    role: 'admin',
    body: domains.UpdateDomainRequest,
    success: [200, domains.UpdatedDomain],
    errors: [400, 401, 403, 404, 422],
  },
  deleteDomain: {
    method: 'DELETE',
    path: '/domains/:id',
    summary: 'Delete a domain',
    auth: 'either',
    workspace: true,
    scope: 'domains:write',
    role: 'admin',
    success: [204, null],
    errors: [401, 403, 404, 422],
  },
  getDomainDns: {
    method: 'GET',
    path: '/domains/:id/dns',
    summary: 'The records to publish and their last observed state',
    auth: 'either',
    workspace: true,
    scope: 'domains:read',
    success: [200, domains.DomainDns],
    errors: [401, 403, 404],
  },
  verifyDomain: {
    method: 'POST',
    path: '/domains/:id/verify',
    summary: 'Look every record up now',
    auth: 'either',
    workspace: true,
    scope: 'domains:write',
    role: 'admin',
    success: [200, domains.VerifiedDomain],
    errors: [401, 403, 404, 429],
  },
  sendEmail: {
    method: 'POST',
    path: '/emails',
    summary: 'Send an email (queued, or scheduled with scheduled_at)',
    auth: 'key',
    workspace: true,
    scope: 'emails:send',
    body: emails.SendEmailRequest,
    maxBody: ATTACHMENT_BODY_LIMIT,
    success: [202, emails.MessageAccepted],
    errors: [400, 401, 403, 409, 422, 429, 451],
  },
  sendBatch: {
    method: 'POST',
    path: '/emails/batch',
    summary: 'Send up to 100 emails; per-item results in request order',
    auth: 'key',
    workspace: true,
    scope: 'emails:send',
    body: emails.SendBatchRequest,
    maxBody: ATTACHMENT_BODY_LIMIT,
    describedBody: lazySchema(() => z.array(emails.SendEmailRequest).min(1).max(emails.MAX_BATCH)),
    success: [207, emails.BatchResult],
    errors: [400, 401, 403, 409, 422, 429],
  },
  getEmail: {
    method: 'GET',
    path: '/emails/:id',
    summary: 'One message with its events timeline',
    auth: 'key',
    workspace: true,
    scope: 'emails:read',
    success: [200, emails.Message],
    errors: [401, 403, 404],
  },
  cancelEmail: {
    method: 'POST',
    path: '/emails/:id/cancel',
    summary: 'Cancel a queued or scheduled message',
    auth: 'key',
    workspace: true,
    scope: 'emails:send',
    success: [200, emails.CancelledMessage],
    errors: [401, 403, 404, 422],
  },
  listEvents: {
    method: 'GET',
    path: '/events',
    summary: 'Events, oldest first; with wait, a long poll for the next ones',
    auth: 'either',
    workspace: true,
    scope: 'emails:read',
    query: events.EventsQuery,
    success: [200, lazySchema(() => listOf(events.Event))],
    errors: [400, 401, 403],
  },
  getOpenApi: {
    method: 'GET',
    path: '/openapi.json',
    summary: 'This API description',
    auth: 'none',
    success: [200, lazySchema(() => z.record(z.string(), z.unknown()))],
    errors: [],
  },
  createInvite: {
    method: 'POST',
    path: '/sandbox/invites',
    auth: 'admin',
    body: workspaces.CreateInviteRequest,
    success: [201, workspaces.Invite],
  },
  createSandboxWorkspace: {
    method: 'POST',
    path: '/sandbox/workspaces',
    auth: 'admin',
    body: workspaces.CreateSandboxWorkspaceRequest,
    success: [201, auth.Workspace],
  },
  suspendWorkspace: {
    method: 'POST',
    path: '/sandbox/workspaces/:id/suspend',
    auth: 'admin',
    success: [200, auth.Workspace],
  },
  activateWorkspace: {
    method: 'POST',
    path: '/sandbox/workspaces/:id/activate',
    auth: 'admin',
    success: [200, auth.Workspace],
  },
  closeWorkspace: {
    method: 'POST',
    path: '/sandbox/workspaces/:id/close',
    auth: 'admin',
    success: [200, auth.Workspace],
  },
  listMessages: {
    method: 'GET',
    path: '/sandbox/messages',
    auth: 'admin',
    query: inbox.MessagesQuery,
    success: [200, inbox.CaughtMessagePage],
  },
  /** The `/v1` messages not caught yet (scheduled, queued, being handed over), newest first. */
  listOutbox: {
    method: 'GET',
    path: '/sandbox/outbox',
    auth: 'admin',
    query: inbox.OutboxQuery,
    success: [200, inbox.OutboxPage],
  },
  getMessage: { method: 'GET', path: '/sandbox/messages/:id', auth: 'admin', success: [200, inbox.CaughtMessage] },
  getRawMessage: {
    method: 'GET',
    path: '/sandbox/messages/:id/raw',
    auth: 'admin',
    query: inbox.ViewQuery,
    views: true,
    success: [200, null],
  },
  deleteMessages: { method: 'DELETE', path: '/sandbox/messages', auth: 'admin', success: [204, null] },
  deleteMessage: { method: 'DELETE', path: '/sandbox/messages/:id', auth: 'admin', success: [204, null] },
  getMessageHtml: {
    method: 'GET',
    path: '/sandbox/messages/:id/html',
    auth: 'admin',
    query: inbox.MessageHtmlQuery,
    views: true,
    success: [200, null],
  },
  getAttachment: {
    method: 'GET',
    path: '/sandbox/messages/:id/attachments/:n',
    auth: 'admin',
    query: inbox.ViewQuery,
    views: true,
    success: [200, null],
  },
  getMessageChecks: {
    method: 'GET',
    path: '/sandbox/messages/:id/checks',
    auth: 'admin',
    query: ChecksQuery,
    success: [200, MessageChecks],
  },
  markMessageRead: {
    method: 'POST',
    path: '/sandbox/messages/:id/read',
    auth: 'admin',
    success: [200, inbox.CaughtMessageSummary],
  },
  markMessageUnread: {
    method: 'POST',
    path: '/sandbox/messages/:id/unread',
    auth: 'admin',
    success: [200, inbox.CaughtMessageSummary],
  },
  /**
   * Waits for caught mail: the oldest message the filters take that no wait has claimed, claimed and in full (svc
   * inbox wait, svc-mail/testing's waitFor, wait_for_message).
   */
  waitForMessage: {
    method: 'POST',
    path: '/sandbox/messages/wait',
    auth: 'admin',
    body: inbox.MessageWaitRequest,
    success: [200, inbox.MessageWaitResult],
  },
  claimMessage: {
    method: 'POST',
    path: '/sandbox/messages/:id/claim',
    auth: 'admin',
    success: [200, inbox.ClaimedMessage],
  },
  /** The relay of this server (`svc serve --relay-url`): its URL without the password, allow-list and rules. */
  getRelay: { method: 'GET', path: '/sandbox/relay', auth: 'admin', success: [200, inbox.RelayInfo] },
  /** Sends a caught message as caught through the relay (`svc serve --relay-url`) to the addresses given. */
  releaseMessage: {
    method: 'POST',
    path: '/sandbox/messages/:id/release',
    auth: 'admin',
    body: inbox.ReleaseRequest,
    success: [200, inbox.ReleaseResult],
  },
  getClock: { method: 'GET', path: '/sandbox/clock', auth: 'admin', success: [200, clock.ClockState] },
  moveClock: {
    method: 'POST',
    path: '/sandbox/clock',
    auth: 'admin',
    body: clock.MoveClockRequest,
    success: [200, clock.MovedClock],
  },
  publishDomain: {
    method: 'POST',
    path: '/sandbox/domains/:id/publish',
    auth: 'admin',
    body: zone.PublishDomainRequest,
    success: [200, zone.PublishedRecords],
  },
  // Up to 50 values of 4,096 characters.
  putDns: {
    method: 'PUT',
    path: '/sandbox/dns',
    auth: 'admin',
    body: zone.PutDnsRequest,
    maxBody: 1024 * 1024,
    success: [200, zone.ZoneRecord],
  },
  deleteDns: {
    method: 'DELETE',
    path: '/sandbox/dns',
    auth: 'admin',
    query: zone.DeleteDnsQuery,
    success: [204, null],
  },
  createWebhook: {
    method: 'POST',
    path: '/sandbox/webhooks',
    auth: 'admin',
    body: webhooks.CreateWebhookRequest,
    success: [201, webhooks.WebhookEndpoint],
  },
  listWebhooks: {
    method: 'GET',
    path: '/sandbox/webhooks',
    auth: 'admin',
    query: webhooks.WebhooksQuery,
    success: [200, webhooks.WebhookList],
  },
  deleteWebhook: { method: 'DELETE', path: '/sandbox/webhooks/:id', auth: 'admin', success: [204, null] },
  rotateWebhookSecret: {
    method: 'POST',
    path: '/sandbox/webhooks/:id/rotate-secret',
    auth: 'admin',
    success: [200, webhooks.WebhookEndpoint],
  },
  enableWebhook: {
    method: 'POST',
    path: '/sandbox/webhooks/:id/enable',
    auth: 'admin',
    success: [200, webhooks.WebhookEndpoint],
  },
  redeliverEvent: {
    method: 'POST',
    path: '/sandbox/events/:id/redeliver',
    auth: 'admin',
    body: webhooks.RedeliverRequest,
    success: [202, webhooks.Redelivery],
  },
  getChaos: { method: 'GET', path: '/sandbox/chaos', auth: 'admin', success: [200, chaos.ChaosState] },
  setChaos: {
    method: 'PUT',
    path: '/sandbox/chaos',
    auth: 'admin',
    body: chaos.SetChaosRequest,
    success: [200, chaos.ChaosState],
  },
  clearChaos: { method: 'DELETE', path: '/sandbox/chaos', auth: 'admin', success: [204, null] },
} as const satisfies Record<string, Endpoint>;

export type EndpointName = keyof typeof endpoints;
type Endpoints = typeof endpoints;
/** The names of the `/v1` operations. */
export type V1EndpointName = { [N in EndpointName]: Endpoints[N]['auth'] extends 'admin' ? never : N }[EndpointName];
/** The names of the sandbox routes. */
export type AdminEndpointName = Exclude<EndpointName, V1EndpointName>;

/** Replace `:param` with values, URI-encoded. */
export function fillPath(path: string, params: Record<string, string> = {}): string {
  return path.replace(/:(\w+)/g, (_, k: string) => encodeURIComponent(params[k] ?? ''));
}

/** The OpenAPI 3.1 document of every `/v1` operation, generated from the schemas that validate requests. */
export function openApiDocument(serverUrl: string): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  const problem = z.toJSONSchema(Problem, { io: 'output' });
  for (const [name, e] of Object.entries(endpoints) as [string, Endpoint][]) {
    if (!isV1(e)) continue;
    const path = e.path.replace(/:(\w+)/g, '{$1}');
    const params = [...e.path.matchAll(/:(\w+)/g)].map((m) => ({
      name: m[1],
      in: 'path',
      required: true,
      schema: { type: 'string' },
    }));
    if (e.query) {
      const q = z.toJSONSchema(e.query, { io: 'input' }) as {
        properties?: Record<string, unknown>;
        required?: string[];
      };
      for (const [k, s] of Object.entries(q.properties ?? {})) {
        params.push({
          name: k,
          in: 'query',
          required: q.required?.includes(k) ?? false,
          schema: s as { type: string },
        });
      }
    }
    const responses: Record<string, unknown> = {};
    const [status, schema] = e.success;
    responses[String(status)] = schema
      ? {
          description: 'Success',
          content: { 'application/json': { schema: z.toJSONSchema(schema, { io: 'output' }) } },
        }
      : { description: 'Success, no body' };
    for (const s of e.errors) {
      responses[String(s)] = { description: 'Problem', content: { 'application/problem+json': { schema: problem } } };
    }
    const security =
      e.auth === 'none'
        ? []
        : e.auth === 'either'
          ? [{ apiKey: [] }, { session: [] }]
          : [{ [e.auth === 'key' ? 'apiKey' : 'session']: [] }];
    (paths[path] ??= {})[e.method.toLowerCase()] = {
      operationId: name,
      summary: e.summary,
      ...(e.scope ? { 'x-scope': e.scope } : {}),
      security,
      parameters: params.length ? params : undefined,
      requestBody: e.body
        ? {
            required: true,
            content: { 'application/json': { schema: z.toJSONSchema(e.describedBody ?? e.body, { io: 'input' }) } },
          }
        : undefined,
      responses,
    };
  }
  return {
    openapi: '3.1.0',
    info: { title: 'svc transactional email API', version: '2026-08-01' },
    servers: [{ url: serverUrl }],
    components: {
      securitySchemes: {
        apiKey: { type: 'http', scheme: 'bearer', description: 'API key (svc_live_… or svc_test_…)' },
        session: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'Session access token' },
      },
      schemas: {
        // The report of a local server's GET /sandbox/messages/{id}/checks (docs/checks.md), outside /v1.
        MessageChecks: z.toJSONSchema(MessageChecks, { io: 'output' }),
      },
    },
    paths,
  };
}

export { Empty };
