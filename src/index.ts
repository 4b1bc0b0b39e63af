// The package's public entry, for use as a library: the typed API client, its errors, and the webhook signature
// functions a receiver needs (`import { createClient, verifyWebhook } from 'svc-mail'`).
export {
  ApiError,
  BaseUrlError,
  ConnectionError,
  ContractError,
  createClient,
  isLoopbackHost,
  memorySessionStore,
  ResponseHeaders,
  SERVICE_VERSION,
  SessionEndedError,
  type CallOptions,
  type Client,
  type ClientOptions,
  type Query,
  type Reply,
  type Secret,
  type SessionStore,
  type SessionTokens,
} from './client/index.js';
export {
  computeSignature,
  DEFAULT_TOLERANCE_SECONDS,
  parseSignatureHeader,
  SIGNATURE_HEADER,
  EVENT_ID_HEADER,
  ATTEMPT_HEADER,
  signWebhook,
  verifyWebhook,
  WebhookVerificationError,
  type SignOptions,
  type VerifyOptions,
  type WebhookVerificationReason,
} from './contract/signature.js';
export type { Problem } from './contract/common.js';
export type { Session, User, Workspace } from './contract/auth.js';
export type { ApiKey, CreatedApiKey, CreateApiKeyRequest, Scope } from './contract/keys.js';
export type { DnsRecord, Domain, Finding, VerifiedDomain } from './contract/domains.js';
export type { Message, MessageAccepted, SendEmailRequest, Tag, Attachment } from './contract/emails.js';
export type { Event, EventType } from './contract/events.js';
export { endpoints, type EndpointName } from './contract/endpoints.js';
