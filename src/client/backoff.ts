/** Delay before retry `attempt` (0 for the first retry): 500 ms doubling up to `maxMs`, half of it random so that
 * clients failing together do not retry together. */
export function backoffDelay(
  attempt: number,
  opts: { baseMs?: number; maxMs?: number } = {},
  random = Math.random,
): number {
  const ceiling = Math.min(opts.maxMs ?? 8_000, (opts.baseMs ?? 500) * 2 ** attempt);
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}

/** `Retry-After` as milliseconds: delay-seconds or an HTTP-date (RFC 9110 section 10.2.3); undefined when absent or malformed. */
export function retryAfterMs(value: string | null | undefined, now = Date.now()): number | undefined {
  if (!value) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** Resolves after `ms`, or rejects with the signal's reason when it aborts first. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
