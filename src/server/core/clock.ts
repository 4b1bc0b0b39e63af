// The service clock as the sandbox shows and moves it (GET/POST /sandbox/clock; docs/local-server.md#the-virtual-clock):
// only a manual clock moves, and only forward. Running the jobs that became due is the scheduler's, which the route
// asks between moving the clock and announcing the new time.
import type { z } from 'zod';
import type { ClockState, MoveClockRequest } from '../../contract/clock.js';
import { iso, type Clock, type ManualClock } from '../../lib/clock.js';
import { ServiceError, fail } from './errors.js';
import type { Inbox } from './inbox.js';

export function createSandboxClock(deps: { clock: Clock; inbox: Pick<Inbox, 'publish'> }) {
  const { clock } = deps;
  const state = (): ClockState => ({ now: iso(clock.now()), mode: clock.mode });
  const manual = () =>
    clock.mode === 'manual'
      ? (clock as ManualClock)
      : fail('conflict', 'The clock is real; restart the server with `svc serve --clock manual` to move it.');

  return {
    state,
    /** Moves a manual clock to `to` (never back) or on by `advance_seconds`. */
    move(body: z.output<typeof MoveClockRequest>): void {
      const c = manual();
      if (body.to === undefined) {
        c.advance(Math.round(body.advance_seconds! * 1000));
        return;
      }
      const target = Date.parse(body.to);
      if (target < c.now()) {
        throw new ServiceError(
          'validation_failed',
          'to: the clock only moves forward; give a time after the current service time.',
          { errors: [{ path: 'to', code: 'in_past', message: 'earlier than the current service time' }] },
        );
      }
      c.set(target);
    },
    /** Tells the inbox page the time moved (once the jobs that became due have run); returns the time. */
    announce(): ClockState {
      const now = state();
      deps.inbox.publish({ event: 'clock', data: now });
      return now;
    },
  };
}
export type SandboxClock = ReturnType<typeof createSandboxClock>;
