import { serverSentEvents } from '../../src/client/inbox-stream.js';

/** Reads a server-sent events response (`GET /sandbox/stream`) one event at a time, with the client's own parser. */
export function eventsOf(res: Response) {
  const events = serverSentEvents(res.body!);
  return {
    /** The next event. */
    async next(): Promise<{ event: string; data: any }> {
      const { done, value } = await events.next();
      if (done) throw new Error('the stream ended');
      return { event: value.event, data: JSON.parse(value.data) };
    },
    /** The next event of this name, skipping others. */
    async nextOf(name: string): Promise<any> {
      for (;;) {
        const e = await this.next();
        if (e.event === name) return e.data;
      }
    },
    close: () => events.return(undefined),
    /** Resolves when the server ends the stream. */
    async ended(): Promise<void> {
      while (!(await events.next()).done);
    },
  };
}
