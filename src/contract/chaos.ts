// Chaos rules as `PUT /sandbox/chaos` takes them and `GET /sandbox/chaos` lists them; their bounds are in chaos-bounds.ts,
// free of imports.
import * as z from 'zod';
import {
  CHAOS_MAX_DELAY_MS,
  CHAOS_MAX_RETRY_AFTER_S,
  CHAOS_MAX_RULES,
  CHAOS_MAX_SEED,
  CHAOS_MAX_TIMES,
  CHAOS_METHODS,
  SMTP_STAGES,
} from './chaos-bounds.js';
import { lazySchema } from './lazy.js';

const WHOLE = 'must be a whole number';
/** A whole number from `min` to `max`: a fraction is a broken rule (422 naming the field), not a wrong type. */
const whole = (min: number, max: number) =>
  z
    .number()
    .min(min)
    .max(max)
    .refine((n) => Number.isInteger(n), WHOLE);

/**
 * What a chaos rule matches: `/v1` requests by `method` and `path` (a `/v1` path, `{name}` standing for one segment:
 * `/v1/emails/{id}`; both optional, so `{}` is every `/v1` request), or one stage of the SMTP sink's sessions (`smtp`).
 */
export const ChaosMatch = lazySchema(() =>
  z.strictObject({
    method: z
      .string()
      .transform((m) => m.toUpperCase())
      .pipe(z.enum(CHAOS_METHODS))
      .optional(),
    path: z
      .string()
      .max(512)
      .regex(/^\/v1\/[^?#\s]*$/, 'must be a /v1 path such as /v1/emails or /v1/emails/{id} (no query string)')
      .optional(),
    smtp: z.enum(SMTP_STAGES).optional(),
  }),
);

/**
 * What a chaos rule does, one of: `status` (a Problem of that status, with `retry_after` seconds in `Retry-After`),
 * `delay_ms` (hold the request, then handle it as usual), `reset` (drop the connection), or for an SMTP match `code`
 * (answer the stage with that reply, and `message`).
 */
export const ChaosAction = lazySchema(() =>
  z.strictObject({
    status: whole(400, 599).optional(),
    retry_after: whole(0, CHAOS_MAX_RETRY_AFTER_S).optional(),
    delay_ms: whole(0, CHAOS_MAX_DELAY_MS).optional(),
    reset: z.literal(true).optional(),
    code: whole(400, 599).optional(),
    message: z
      .string()
      .min(1)
      .max(200)
      .regex(/^[^\r\n]*$/, 'must be one line')
      .optional(),
  }),
);

const HTTP_ACTIONS = ['status', 'delay_ms', 'reset'] as const;

/** One chaos rule as `PUT /sandbox/chaos` takes it. */
export const ChaosRule = lazySchema(() =>
  z
    .strictObject({
      match: ChaosMatch,
      action: ChaosAction,
      /** Apply to the next N matches, then retire. */
      times: whole(1, CHAOS_MAX_TIMES).optional(),
      /** The chance (0–1) that a match is applied, drawn from the seed. */
      probability: z.number().min(0).max(1).optional(),
    })
    .superRefine((rule, ctx) => {
      const { match, action } = rule;
      const issue = (path: (string | number)[], message: string) => ctx.addIssue({ code: 'custom', path, message });
      const smtp = match.smtp !== undefined;
      if (smtp) {
        for (const k of ['method', 'path'] as const) {
          if (match[k] !== undefined) issue(['match', k], 'an SMTP match (smtp) takes no method or path');
        }
      }
      const given = [...HTTP_ACTIONS, 'code' as const].filter((k) => action[k] !== undefined);
      const [first, second] = given;
      if (first === undefined) {
        issue(['action'], smtp ? 'must give code (the SMTP reply)' : 'must give one of status, delay_ms or reset');
      } else if (second !== undefined) {
        issue(['action', second], `give one action: ${given.join(' and ')} cannot go together`);
      }
      for (const k of given) {
        if (smtp && k !== 'code') issue(['action', k], 'an SMTP match takes only a code action');
        if (!smtp && k === 'code') {
          issue(['action', 'code'], 'code answers an SMTP stage: give match.smtp, or status for an HTTP answer');
        }
      }
      if (action.retry_after !== undefined && action.status === undefined) {
        issue(['action', 'retry_after'], 'goes with status');
      }
      if (action.message !== undefined && action.code === undefined) issue(['action', 'message'], 'goes with code');
    }),
);
export type ChaosRule = z.input<typeof ChaosRule>;

export const SetChaosRequest = lazySchema(() =>
  z.strictObject({
    rules: z.array(ChaosRule).max(CHAOS_MAX_RULES),
    /** Seeds the draws of `probability`: the same seed and the same requests fail the same way. */
    seed: whole(0, CHAOS_MAX_SEED).optional(),
  }),
);

/** A rule as listed: as given, with how many more matches it applies to (null: no limit). */
export const ListedChaosRule = lazySchema(() =>
  z.object({
    match: z.object({
      method: z.string().optional(),
      path: z.string().optional(),
      smtp: z.enum(SMTP_STAGES).optional(),
    }),
    action: z.object({
      status: z.number().int().optional(),
      retry_after: z.number().int().optional(),
      delay_ms: z.number().int().optional(),
      reset: z.literal(true).optional(),
      code: z.number().int().optional(),
      message: z.string().optional(),
    }),
    times: z.number().int().optional(),
    probability: z.number().optional(),
    remaining: z.number().int().nullable(),
  }),
);
export type ListedChaosRule = z.infer<typeof ListedChaosRule>;
/** The rules in force, in order (a rule's index is its place here, the `Svc-Chaos` header), and the seed. */
export const ChaosState = lazySchema(() => z.object({ rules: z.array(ListedChaosRule), seed: z.number().int() }));
export type ChaosState = z.infer<typeof ChaosState>;
