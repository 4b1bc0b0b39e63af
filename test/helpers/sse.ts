/** Reads a server-sent events response (`GET /sandbox/stream`) one event at a time; comments are skipped. */
export function eventsOf(res: Response) {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  return {
    /** The next event. */
    async next(): Promise<{ event: string; data: any }> {
      for (;;) {
        const end = buffer.indexOf('\n\n');
        if (end >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const event = /^event: (.*)$/m.exec(block)?.[1];
          const data = /^data: (.*)$/m.exec(block)?.[1];
          if (event && data !== undefined) return { event, data: JSON.parse(data) };
          continue;
        }
        const { done, value } = await reader.read();
        if (done) throw new Error('the stream ended');
        buffer += decoder.decode(value, { stream: true });
      }
    },
    /** The next event of this name, skipping others. */
    async nextOf(name: string): Promise<any> {
      for (;;) {
        const e = await this.next();
        if (e.event === name) return e.data;
      }
    },
    close: () => reader.cancel(),
    /** Resolves when the server ends the stream. */
    async ended(): Promise<void> {
      for (;;) if ((await reader.read()).done) return;
    },
  };
}
