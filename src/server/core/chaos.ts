// Chaos: failures on purpose. The rules a sandbox was given (PUT /sandbox/chaos) and the one decision made for each
// `/v1` request and each SMTP stage of the sink: which rule, if any, answers it. A rule matches `/v1` requests by
// method and path (`{id}`-style placeholders) or an SMTP stage; it may apply only the next `times` matches, and only
// with a `probability`, drawn from a generator seeded by the rules' `seed`, so a run with the same seed and the same
// requests fails the same way.
import type { SmtpStage } from '../../contract/chaos-bounds.js';
import type { ErrorCode } from '../../contract/common.js';

export type { SmtpStage };

export type ChaosMatch = { method?: string; path?: string } | { smtp: SmtpStage };

export type ChaosAction =
  /** Answer with a Problem of this status (`Retry-After` on 429 and 503). */
  | { status: number; retry_after?: number }
  /** Hold the request this long, then handle it as usual. */
  | { delay_ms: number }
  /** Drop the connection without an answer. */
  | { reset: true }
  /** SMTP: answer the stage with this reply. */
  | { code: number; message?: string };

export interface ChaosRule {
  match: ChaosMatch;
  action: ChaosAction;
  /** Apply to the next N matches, then retire. */
  times?: number;
  /** 0–1: the chance a match is applied, drawn from the seed. */
  probability?: number;
}

/** A rule as listed: how many more matches it applies to (null: no limit). */
export type ListedRule = ChaosRule & { remaining: number | null };

export interface ChaosState {
  rules: ListedRule[];
  seed: number;
}

/** The rule that answers: its index in the list (the `Svc-Chaos` header) and what it does. */
export interface ChaosHit {
  index: number;
  action: ChaosAction;
}

export interface Chaos {
  /** Replaces the rules; the generator starts again from the seed (a random one when none is given). */
  set(rules: ChaosRule[], seed?: number): ChaosState;
  list(): ChaosState;
  clear(): void;
  /** The rule that answers a `/v1` request, if any: the first that matches, is not retired and draws true. */
  http(method: string, path: string): ChaosHit | null;
  /** The rule that answers this stage of an SMTP session, if any. */
  smtp(stage: SmtpStage): ChaosHit | null;
}

interface Live {
  rule: ChaosRule;
  remaining: number | null;
  test: (method: string, path: string) => boolean;
}

export function createChaos(): Chaos {
  let live: Live[] = [];
  let seed = 0;
  let next = mulberry32(0);

  function pick(matches: (l: Live) => boolean): ChaosHit | null {
    for (const [index, l] of live.entries()) {
      if (l.remaining === 0 || !matches(l)) continue;
      if (l.rule.probability !== undefined && next() >= l.rule.probability) continue;
      if (l.remaining !== null) l.remaining--;
      return { index, action: l.rule.action };
    }
    return null;
  }

  const state = (): ChaosState => ({ rules: live.map((l) => ({ ...l.rule, remaining: l.remaining })), seed });

  return {
    set(rules, s) {
      seed = s ?? Math.floor(Math.random() * 2 ** 31);
      next = mulberry32(seed);
      live = rules.map((rule) => ({ rule, remaining: rule.times ?? null, test: httpTest(rule.match) }));
      return state();
    },
    list: state,
    clear() {
      live = [];
    },
    http: (method, path) => pick((l) => l.test(method.toUpperCase(), path)),
    smtp: (stage) => pick((l) => 'smtp' in l.rule.match && l.rule.match.smtp === stage),
  };
}

/** A `{name}` segment of a rule's path: any one segment. */
const PLACEHOLDER = /^\{[^/{}]+\}$/;

/** The code of a status a chaos rule answers with: the service's own for it, else the generic one of its class. */
const CODE_OF_STATUS: Record<number, ErrorCode> = {
  400: 'invalid_request',
  401: 'missing_credentials',
  403: 'forbidden',
  404: 'not_found',
  405: 'method_not_allowed',
  408: 'request_timeout',
  409: 'conflict',
  413: 'payload_too_large',
  422: 'validation_failed',
  429: 'rate_limited',
  451: 'content_blocked',
  500: 'internal_error',
  503: 'unavailable',
  507: 'insufficient_storage',
};

export function chaosCode(status: number): ErrorCode {
  return CODE_OF_STATUS[status] ?? (status < 500 ? 'invalid_request' : 'internal_error');
}

/**
 * Why an HTTP match can never take a request, or null when some route takes it: `routes` are the `/v1` routes served
 * (`/v1/emails/:id`), and the match's path is compared segment by segment, a placeholder on either side taking any.
 */
export function unmatchable(
  match: { method?: string; path?: string },
  routes: readonly { method: string; path: string }[],
): { field: 'method' | 'path'; message: string } | null {
  const method = match.method?.toUpperCase();
  if (match.path === undefined) {
    if (method === undefined || routes.some((r) => r.method === method)) return null;
    return { field: 'method', message: `no /v1 route takes ${method}` };
  }
  const segments = (p: string) => p.replace(/\/+$/, '').split('/');
  const placeholder = (seg: string) => PLACEHOLDER.test(seg) || /^:\w+$/.test(seg);
  const want = segments(match.path);
  const same = routes.filter((r) => {
    const have = segments(r.path);
    return (
      have.length === want.length &&
      have.every((seg, i) => seg === want[i] || placeholder(seg) || placeholder(want[i]!))
    );
  });
  if (same.length === 0) {
    return {
      field: 'path',
      message: 'no /v1 route has this path; GET /v1/openapi.json lists them (e.g. /v1/emails/{id})',
    };
  }
  if (method !== undefined && !same.some((r) => r.method === method)) {
    const methods = [...new Set(same.map((r) => r.method))].join(', ');
    return { field: 'method', message: `${match.path} takes ${methods}, not ${method}` };
  }
  return null;
}

/** Whether a rule's match takes a `/v1` request: its method (any when absent) and path, `{name}` standing for one segment. */
function httpTest(match: ChaosMatch): (method: string, path: string) => boolean {
  if ('smtp' in match) return () => false;
  const method = match.method?.toUpperCase();
  const path = match.path === undefined ? null : pathPattern(match.path);
  return (m, p) => (method === undefined || m === method) && (path === null ? p.startsWith('/v1/') : path.test(p));
}

function pathPattern(template: string): RegExp {
  const parts = template
    .replace(/\/+$/, '')
    .split('/')
    .map((seg) => (PLACEHOLDER.test(seg) ? '[^/]+' : escapeRegExp(seg)));
  return new RegExp(`^${parts.join('/')}/?$`);
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** A small seeded generator of numbers in [0, 1): the same seed gives the same sequence. */
function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
