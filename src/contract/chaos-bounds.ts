// The bounds of chaos rules (PUT /sandbox/chaos, chaos.ts), free of imports: the command line's wiring
// reads them to parse its flags without loading zod.

/** The stages of an SMTP session of the sink a chaos rule can answer. */
export const SMTP_STAGES = ['connect', 'mail', 'rcpt', 'data'] as const;
export type SmtpStage = (typeof SMTP_STAGES)[number];
/** The HTTP methods of `/v1` a chaos rule can match. */
export const CHAOS_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
/** The longest a chaos rule holds a request (`delay_ms`): one minute, as long as a whole request may take. */
export const CHAOS_MAX_DELAY_MS = 60_000;
/** The longest `Retry-After` a chaos rule sends (`retry_after`), in seconds: a day. */
export const CHAOS_MAX_RETRY_AFTER_S = 86_400;
/** The most rules in force at once. */
export const CHAOS_MAX_RULES = 100;
/** The largest seed (the draws' generator takes 32 bits). */
export const CHAOS_MAX_SEED = 2 ** 32 - 1;
/** The most matches `times` may count. */
export const CHAOS_MAX_TIMES = 1_000_000;
