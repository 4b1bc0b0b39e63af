// The service clock of a local server (`/sandbox/clock`): read, and moved by hand.
import * as z from 'zod';
import { InputTimestamp, Timestamp } from './common.js';
import { lazySchema } from './lazy.js';

export const ClockState = lazySchema(() => z.object({ now: Timestamp, mode: z.enum(['real', 'manual']) }));
export type ClockState = z.infer<typeof ClockState>;

export const MoveClockRequest = lazySchema(() =>
  z
    .strictObject({
      advance_seconds: z
        .number()
        .min(0)
        .max(10 * 365 * 86400)
        .optional(),
      to: InputTimestamp.optional(),
    })
    .refine((b) => (b.advance_seconds === undefined) !== (b.to === undefined), {
      message: 'give exactly one of advance_seconds and to',
    }),
);
export const MovedClock = lazySchema(() => z.object({ now: Timestamp, ran: z.number().int() }));
export type MovedClock = z.infer<typeof MovedClock>;
