// The service clock of a local server (docs/local-server.md#sandbox-routes): read, or moved and the jobs then due run.
import type { Core } from '../../core/index.js';
import type { Handlers } from '../handlers.js';

/** `runDue` runs the jobs the moved clock made due, and says how many ran. */
export function clockRoutes(core: Core, runDue: () => Promise<number>): Pick<Handlers, 'getClock' | 'moveClock'> {
  const { clock } = core;
  return {
    getClock: () => ({ body: clock.state() }),
    moveClock: async ({ body }) => {
      clock.move(body);
      const ran = await runDue();
      return { body: { now: clock.announce().now, ran } };
    },
  };
}
