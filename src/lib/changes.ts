// Wake-ups for code waiting on new data (long polls, live pages): writers call notify(topic) inside the transaction
// that makes the change; listeners are called once that turn of the event loop is over, so they read what was
// committed (a change rolled back just leads to a read that finds nothing new). Nothing polls on a timer.

export interface Changes {
  /** Marks a topic changed; its listeners run after the current turn (several notifies in one turn: one call). */
  notify(topic: string): void;
  /** Calls `fn` after each turn in which `topic` changed; returns the unsubscribe function. */
  subscribe(topic: string, fn: () => void): () => void;
  /**
   * Resolves `true` the first time `topic` changes, `false` after `ms` milliseconds, when `signal` aborts, or at
   * once when the changes are closed.
   */
  next(topic: string, ms: number, signal?: AbortSignal): Promise<boolean>;
  /** Releases every waiter (`false`) and every later one: the server is shutting down. */
  close(): void;
  /** Whether close() was called. */
  readonly closed: boolean;
}

export function createChanges(): Changes {
  const listeners = new Map<string, Set<() => void>>();
  const dirty = new Set<string>();
  const closers = new Set<() => void>();
  let closed = false;
  let scheduled = false;

  const flush = () => {
    scheduled = false;
    const topics = [...dirty];
    dirty.clear();
    for (const t of topics) for (const fn of [...(listeners.get(t) ?? [])]) fn();
  };

  const subscribe = (topic: string, fn: () => void) => {
    let set = listeners.get(topic);
    if (!set) listeners.set(topic, (set = new Set()));
    set.add(fn);
    return () => {
      set.delete(fn);
      if (set.size === 0 && listeners.get(topic) === set) listeners.delete(topic);
    };
  };

  return {
    notify(topic) {
      if (!listeners.has(topic)) return;
      dirty.add(topic);
      if (!scheduled) {
        scheduled = true;
        setImmediate(flush);
      }
    },
    subscribe,
    next(topic, ms, signal) {
      if (closed || signal?.aborted) return Promise.resolve(false);
      return new Promise<boolean>((resolve) => {
        const done = (changed: boolean) => {
          clearTimeout(timer);
          unsubscribe();
          closers.delete(onClose);
          signal?.removeEventListener('abort', onAbort);
          resolve(changed);
        };
        const onClose = () => done(false);
        const onAbort = () => done(false);
        const unsubscribe = subscribe(topic, () => done(true));
        const timer = setTimeout(() => done(false), ms);
        closers.add(onClose);
        signal?.addEventListener('abort', onAbort, { once: true });
      });
    },
    close() {
      closed = true;
      for (const c of [...closers]) c();
    },
    get closed() {
      return closed;
    },
  };
}
