// A number of bytes that work may hold at once, shared by everything that takes from it. Who finds no room waits, in
// the order they came, until enough is given back; one request larger than the whole waits until nothing is held and
// then goes alone, rather than never.

export interface ByteBudget {
  /** Waits until `n` bytes fit and takes them; resolves with the function that gives them back (once). */
  take(n: number): Promise<() => void>;
  /** Bytes taken and not given back. */
  readonly held: number;
  /** Requests waiting for room. */
  readonly waiting: number;
}

export function createByteBudget(total: number): ByteBudget {
  let held = 0;
  const queue: { n: number; grant: (give: () => void) => void }[] = [];

  const fits = (n: number) => held === 0 || held + n <= total;

  function grant(n: number): () => void {
    held += n;
    let given = false;
    return () => {
      if (given) return;
      given = true;
      held -= n;
      // First come, first served: a large request at the head is not overtaken by smaller ones behind it.
      for (let next = queue[0]; next && fits(next.n); next = queue[0]) {
        queue.shift();
        next.grant(grant(next.n));
      }
    };
  }

  return {
    take(n) {
      if (!queue.length && fits(n)) return Promise.resolve(grant(n));
      return new Promise((resolve) => queue.push({ n, grant: resolve }));
    },
    get held() {
      return held;
    },
    get waiting() {
      return queue.length;
    },
  };
}
