// The seed file of `svc serve --seed FILE` (or SVC_SEED), and `startSandbox({ seed })`'s object of the same shape: what
// must exist on every start — users, workspaces, domains, API keys with given values, webhook endpoints with given
// secrets, suppressions. The schema is here, with the refusals in the words a person reads; reading the file (YAML or
// JSON, with the line of each refusal) is the server's (src/server/seed-file.ts), applying it core's
// (src/server/core/seed-file.ts). docs/local-server.md#the-seed-file tells every field.
import { createPrivateKey } from 'node:crypto';
import * as z from 'zod';
import { EVENT_TYPES } from './events.js';
import { API_KEY_PATTERN, KEY_CHARS } from './ids.js';
import { SCOPES } from './keys.js';
import { lazySchema } from './lazy.js';
import { SECRET_PREFIX } from './signature.js';

/** The command that prints a fresh, valid API key value, offline. */
export const KEYS_GENERATE = 'svc keys generate --mode test';

/** What an API key value must look like, and how to make one. */
export const KEY_VALUE_EXPECTED =
  `expected an API key such as svc_test_… (${'svc_test_'.length + KEY_CHARS} characters: svc_test_ or svc_live_, then ` +
  `${KEY_CHARS} letters and digits); make one with \`${KEYS_GENERATE}\``;

/** A webhook endpoint's secret as the file may give it: `whsec_` and at least 24 characters of base64. */
const WEBHOOK_SECRET_PATTERN = /^whsec_[A-Za-z0-9+/_-]{24,}={0,2}$/;

/** The most webhook endpoints a workspace may have (core/webhooks.ts MAX_ENDPOINTS, docs/api.md#webhooks). */
const MAX_ENDPOINTS = 5;

const DOMAIN_NAME = /^(?=.{1,253}$)(?!-)[a-z0-9-]{1,63}(?<!-)(\.(?!-)[a-z0-9-]{1,63}(?<!-))+$/i;

const email = () =>
  z
    .string({ error: 'expected an email address such as ada@example.test' })
    .regex(/^[^\s@<>]+@[^\s@<>]+\.[^\s@<>]+$/, 'expected an email address such as ada@example.test');
const text = (what: string, max = 128) =>
  z
    .string({ error: `expected ${what}` })
    .min(1, `expected ${what}, not an empty string`)
    .max(max, `expected at most ${max} characters`);
const flag = (what: string) => z.boolean({ error: `expected true or false (${what})` });
/** The workspace an item belongs to: a name under `workspaces`; left out, the one workspace the file declares. */
const workspaceRef = () => text('the name of a workspace declared under workspaces').optional();

/** An item of a list: a mapping of these fields, and no other. */
const item = <S extends z.core.$ZodLooseShape>(shape: S) =>
  z.strictObject(shape, { error: `expected a mapping of ${Object.keys(shape).join(', ')}` });

export const SeedUser = lazySchema(() =>
  item({
    email: email(),
    password: z
      .string({ error: 'expected a password (at least 12 characters)' })
      .min(12, 'expected a password of at least 12 characters')
      .max(256, 'expected a password of at most 256 characters'),
    /** Whether the email address counts as confirmed (default true). */
    confirmed: flag('whether the email address is confirmed').optional(),
    name: text('a display name').optional(),
  }),
);

export const SeedWorkspace = lazySchema(() =>
  item({
    name: text('a workspace name'),
    /** The email of a user under `users`; left out, the one user the file declares. */
    owner: email().optional(),
  }),
);

export const SeedDomain = lazySchema(() =>
  item({
    name: z
      .string({ error: 'expected a domain name such as example.test' })
      .regex(DOMAIN_NAME, 'expected a domain name such as example.test'),
    workspace: workspaceRef(),
    /** Verified at once (its records published in the sandbox zone), or pending like a new domain (default false). */
    verified: flag('whether the domain is verified').optional(),
    /** The DKIM signing key, an RSA private key in PEM; left out, one made on the first start and kept. */
    dkim_private_key: z
      .string({ error: 'expected an RSA private key in PEM (-----BEGIN PRIVATE KEY-----…)' })
      .refine(isRsaPrivateKey, 'expected an RSA private key in PEM (-----BEGIN PRIVATE KEY-----…)')
      .optional(),
  }),
);

export const SeedApiKey = lazySchema(() =>
  item({
    value: z.string({ error: KEY_VALUE_EXPECTED }).regex(API_KEY_PATTERN, KEY_VALUE_EXPECTED),
    name: text('a key name').optional(),
    workspace: workspaceRef(),
    /** Must agree with the value's prefix when given (svc_test_ → test). */
    mode: z.enum(['test', 'live'], { error: 'expected test or live' }).optional(),
    /** Default: every scope. */
    scopes: z
      .array(z.enum(SCOPES, { error: `expected one of ${SCOPES.join(', ')}` }), {
        error: 'expected a list of scopes',
      })
      .min(1, 'expected at least one scope')
      .optional(),
    /** The name of a domain of the same workspace, under `domains`: the key sends from it alone. */
    domain: text('the name of a domain declared under domains').optional(),
  }),
);

export const SeedWebhookEndpoint = lazySchema(() =>
  item({
    url: z
      .string({ error: 'expected an http:// or https:// URL' })
      .refine(isHttpUrl, 'expected an absolute http:// or https:// URL, such as http://127.0.0.1:3000/webhooks'),
    workspace: workspaceRef(),
    /** Left out: one made on the first start and kept. */
    secret: z
      .string({ error: `expected a secret such as ${SECRET_PREFIX}… ` })
      .regex(
        WEBHOOK_SECRET_PATTERN,
        `expected a secret such as ${SECRET_PREFIX} followed by at least 24 characters of base64 ` +
          '(`openssl rand -base64 32` makes them)',
      )
      .optional(),
    /** Default: every event type. */
    events: z
      .array(z.enum(EVENT_TYPES, { error: 'expected an event type such as email.delivered' }), {
        error: 'expected a list of event types',
      })
      .min(1, 'expected at least one event type')
      .optional(),
  }),
);

export const SUPPRESSION_REASONS = ['manual', 'hard_bounce', 'complaint'] as const;

export const SeedSuppression = lazySchema(() =>
  item({
    address: email(),
    workspace: workspaceRef(),
    /** Default `manual`. */
    reason: z.enum(SUPPRESSION_REASONS, { error: `expected one of ${SUPPRESSION_REASONS.join(', ')}` }).optional(),
  }),
);

const list = <T extends z.ZodType>(item: T, what: string) =>
  z.array(item, { error: `expected a list of ${what}` }).optional();

/** The seed file's fields, each list optional (SeedFile adds what one part says of another). */
const SeedFileFields = lazySchema(() =>
  z.strictObject(
    {
      /** Also make `svc serve`'s demo account (owner@example.test), which a seed file otherwise replaces. */
      demo_account: flag("whether svc serve's demo account is made too").optional(),
      users: list(SeedUser, 'users'),
      workspaces: list(SeedWorkspace, 'workspaces'),
      domains: list(SeedDomain, 'domains'),
      api_keys: list(SeedApiKey, 'API keys'),
      webhook_endpoints: list(SeedWebhookEndpoint, 'webhook endpoints'),
      suppressions: list(SeedSuppression, 'suppressions'),
    },
    { error: 'expected a mapping of users, workspaces, domains, api_keys, webhook_endpoints, suppressions' },
  ),
);
export type SeedFile = z.infer<typeof SeedFileFields>;

/** The seed file, as parsed: every list optional. */
export const SeedFile = lazySchema(() => SeedFileFields.superRefine(crossReferences));
export type SeedUser = z.infer<typeof SeedUser>;
export type SeedApiKey = z.infer<typeof SeedApiKey>;

/** One refusal of a seed file: where (the path of the field) and what was expected. */
export interface SeedProblem {
  path: (string | number)[];
  message: string;
  /** An unknown field: shown first, as it is often the misspelling of a field that is then missing. */
  unknown?: boolean;
}

/** `api_keys[0].value` */
export function seedPath(path: readonly (string | number)[]): string {
  return path.map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? p : `.${p}`)).join('');
}

/** The seed, checked: the object, or its refusals in order (the first is what a person is shown). */
export function checkSeedFile(input: unknown): { ok: true; seed: SeedFile } | { ok: false; problems: SeedProblem[] } {
  const r = SeedFile.safeParse(input ?? {});
  if (r.success) return { ok: true, seed: r.data };
  const problems = r.error.issues.map((issue) => problemOf(issue, input));
  return { ok: false, problems: [...problems.filter((p) => p.unknown), ...problems.filter((p) => !p.unknown)] };
}

/** A refusal as `path: message`, the path of an unknown field ending in that field. */
function problemOf(issue: z.core.$ZodIssue, input: unknown): SeedProblem {
  const path = issue.path.filter((p): p is string | number => typeof p !== 'symbol');
  if (issue.code === 'unrecognized_keys') {
    const [key] = issue.keys;
    const known = knownFields(path);
    return {
      path: [...path, key!],
      message: `unknown field${known ? `; expected one of ${known}` : ''}`,
      unknown: true,
    };
  }
  const missing = issue.code === 'invalid_type' && path.length > 0 && valueAt(input, path) === undefined;
  return { path, message: missing ? `missing; ${issue.message}` : issue.message };
}

function valueAt(input: unknown, path: (string | number)[]): unknown {
  let v = input;
  for (const p of path) v = v !== null && typeof v === 'object' ? (v as Record<string, unknown>)[p] : undefined;
  return v;
}

/** The fields an object at `path` may have, for the refusal of an unknown one. */
function knownFields(path: (string | number)[]): string {
  const shapes: Record<string, { shape: object }> = {
    users: SeedUser,
    workspaces: SeedWorkspace,
    domains: SeedDomain,
    api_keys: SeedApiKey,
    webhook_endpoints: SeedWebhookEndpoint,
    suppressions: SeedSuppression,
  };
  if (path.length === 0) return Object.keys(shapes).concat('demo_account').sort().join(', ');
  const s = shapes[String(path[0])];
  return s ? Object.keys(s.shape).join(', ') : '';
}

function isRsaPrivateKey(pem: string): boolean {
  try {
    return createPrivateKey(pem).asymmetricKeyType === 'rsa';
  } catch {
    return false;
  }
}

function isHttpUrl(s: string): boolean {
  try {
    const u = new URL(s);
    return u.protocol === 'http:' || u.protocol === 'https:';
  } catch {
    return false;
  }
}

/** What one part of the file says of another: owners, workspaces and domains named, values given twice. */
function crossReferences(f: SeedFile, ctx: z.RefinementCtx) {
  const problem = (path: (string | number)[], message: string) => ctx.addIssue({ code: 'custom', path, message });
  const users = f.users ?? [];
  const workspaces = f.workspaces ?? [];
  const twice = <T>(items: T[], keyOf: (t: T) => string, field: string, section: string, what: string) => {
    const seen = new Map<string, number>();
    items.forEach((t, i) => {
      const k = keyOf(t);
      const first = seen.get(k);
      if (first !== undefined) problem([section, i, field], `${what} is already declared at ${section}[${first}]`);
      else seen.set(k, i);
    });
  };
  twice(users, (u) => u.email.toLowerCase(), 'email', 'users', 'this email');
  twice(workspaces, (w) => w.name, 'name', 'workspaces', 'a workspace of this name');
  twice(f.api_keys ?? [], (k) => k.value, 'value', 'api_keys', 'this key');

  const emails = new Set(users.map((u) => u.email.toLowerCase()));
  workspaces.forEach((w, i) => {
    if (w.owner === undefined) {
      if (users.length !== 1)
        problem(
          ['workspaces', i, 'owner'],
          users.length
            ? 'expected the email of its owner, one of the users (the file declares several)'
            : 'expected the email of its owner; declare the user under users',
        );
    } else if (!emails.has(w.owner.toLowerCase())) {
      problem(['workspaces', i, 'owner'], 'expected the email of a user declared under users');
    }
  });

  const names = new Set(workspaces.map((w) => w.name));
  /** The workspace an item names, or null (refused here). */
  const workspaceOf = (ref: string | undefined, path: (string | number)[]): string | null => {
    if (ref !== undefined) {
      if (names.has(ref)) return ref;
      problem([...path, 'workspace'], 'expected the name of a workspace declared under workspaces');
      return null;
    }
    if (workspaces.length === 1) return workspaces[0]!.name;
    problem(
      [...path, 'workspace'],
      workspaces.length
        ? 'expected the name of its workspace (the file declares several)'
        : 'expected a workspace; declare one under workspaces',
    );
    return null;
  };

  const domains = new Map<string, number>();
  (f.domains ?? []).forEach((d, i) => {
    const ws = workspaceOf(d.workspace, ['domains', i]);
    if (ws === null) return;
    const k = `${ws}\u0000${d.name.toLowerCase()}`;
    const first = domains.get(k);
    if (first !== undefined) problem(['domains', i, 'name'], `this domain is already declared at domains[${first}]`);
    else domains.set(k, i);
  });
  (f.api_keys ?? []).forEach((k, i) => {
    const ws = workspaceOf(k.workspace, ['api_keys', i]);
    const mode = k.value.startsWith('svc_live_') ? 'live' : 'test';
    if (k.mode !== undefined && k.mode !== mode)
      problem(['api_keys', i, 'mode'], `expected ${mode}, as the value's prefix svc_${mode}_ says`);
    if (ws !== null && k.domain !== undefined && !domains.has(`${ws}\u0000${k.domain.toLowerCase()}`))
      problem(['api_keys', i, 'domain'], `expected the name of a domain of workspace ${ws} declared under domains`);
  });
  const endpoints = new Map<string, number>();
  (f.webhook_endpoints ?? []).forEach((e, i) => {
    const ws = workspaceOf(e.workspace, ['webhook_endpoints', i]);
    if (ws === null) return;
    const k = `${ws}\u0000${e.url}`;
    if (endpoints.has(k))
      problem(
        ['webhook_endpoints', i, 'url'],
        `this URL is already declared at webhook_endpoints[${endpoints.get(k)}]`,
      );
    else endpoints.set(k, i);
    if ([...endpoints.keys()].filter((x) => x.startsWith(`${ws}\u0000`)).length > MAX_ENDPOINTS)
      problem(['webhook_endpoints', i], `a workspace has at most ${MAX_ENDPOINTS} webhook endpoints`);
  });
  (f.suppressions ?? []).forEach((s, i) => {
    workspaceOf(s.workspace, ['suppressions', i]);
  });
}
