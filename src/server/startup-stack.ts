// What a phase of `svc serve`'s start-up has opened, closed in the reverse order of opening: on stop, and when a
// start fails part-way, since nothing left open (a thread, a listener, the lock) may keep a process that failed to
// start alive, or a supervisor would never see it exit.

/** The close of each thing opened so far, the latest on top. */
export interface Opened {
  /** Adds the close of what has just opened. */
  push(close: () => Promise<void> | void): void;
  /** Closes everything pushed, the latest first, and empties the stack; a close that throws leaves the rest to close. */
  unwind(): Promise<void>;
}

export function opened(): Opened {
  const closes: (() => Promise<void> | void)[] = [];
  return {
    push(close) {
      closes.push(close);
    },
    async unwind() {
      for (let close = closes.pop(); close; close = closes.pop()) {
        try {
          await close();
        } catch {
          // The rest is still closed.
        }
      }
    },
  };
}
