// The process a long-running `svc serve` wants: node's flags and glibc's malloc settings, given by restarting in place
// (or, where that cannot be done, what can be taken at run time). bench/ starts its servers with the same.

/**
 * The node flags `svc serve` runs with. A server allocates steadily for as long as it runs, and V8 would otherwise size
 * its heap for throughput:
 * --max-semi-space-size=8: the young generation stops at 8 MB semi-spaces instead of 32 MB (less resident memory, no
 * measurable throughput);
 * --heap-growing-percent=100: the old generation may grow to twice what survived the last full collection before it
 * collects again, instead of up to four times: a lower peak at the same throughput, the send bench still within its
 * targets (bench/README.md, how the server runs in the benches).
 * --expose-gc: the server starts a collection when a big message is through and nothing else is in delivery
 * (workers/delivery.ts, outbound/compose-thread.ts): left to V8, a server gone idle kept such a message's copies resident
 * for up to a minute.
 */
export const SERVE_NODE_FLAGS = ['--max-semi-space-size=8', '--heap-growing-percent=100', '--expose-gc'];

/**
 * The environment `svc serve` runs with, read by glibc's malloc when the process starts (other C libraries ignore it).
 * MALLOC_MMAP_THRESHOLD_: every allocation of 128 KiB or more gets memory of its own, given back to the system when it
 * is freed. glibc's default raises that threshold to the size of the largest block freed so far (up to 32 MiB), so once
 * a big message had passed, the next ones' buffers were carved from the heap and stayed resident after they were
 * freed (bench/README.md, bench:big-mail).
 * MALLOC_TRIM_THRESHOLD_: fixing the first also fixes the free space kept at the top of the heap at 128 KiB (the
 * default raises it with the other), and the heap then shrank and grew again about once a message in a drain of small
 * ones; 4 MiB keeps that as before.
 */
export const SERVE_ENV: Readonly<Record<string, string>> = {
  MALLOC_MMAP_THRESHOLD_: '131072',
  MALLOC_TRIM_THRESHOLD_: '4194304',
};

/**
 * Gives this process the serve flags and environment. They are not on bin/svc.js's first line: any V8 flag there makes
 * Node compile every built-in module it loads after start-up afresh instead of from the compiled code it ships (the
 * code is tied to the default flags), which cost each client command a third of its start. Node ≥ 22.15 restarts the
 * process in place with them (process.execve: same pid, same stdio; not on Windows).
 *
 * Without execve (Node 20, Node 22 before 22.15, Windows) the process cannot be given them afresh, and it gets less:
 * --heap-growing-percent=100 taken at run time; a collector obtained by turning on --expose-gc at run time and taking
 * `gc` from a new context (the worker threads started afterwards have theirs as a global); the young generation keeps
 * V8's size (its semi-spaces are already sized); malloc keeps glibc's defaults, read at start, unless whoever started
 * node set SERVE_ENV itself.
 */
export function withServeFlags(): void {
  const missing = SERVE_NODE_FLAGS.filter((f) => !process.execArgv.includes(f));
  const envMissing = Object.entries(SERVE_ENV).some(([name, value]) => process.env[name] !== value);
  if (missing.length === 0 && !envMissing) return;
  const { execve } = process as unknown as { execve?: (file: string, args: string[], env: NodeJS.ProcessEnv) => never };
  if (execve && process.platform !== 'win32') {
    execve(process.execPath, [process.execPath, ...missing, ...process.execArgv, ...process.argv.slice(1)], {
      ...process.env,
      ...SERVE_ENV,
    });
  }
  const v8 = process.getBuiltinModule('node:v8');
  if (missing.includes('--heap-growing-percent=100')) v8.setFlagsFromString('--heap-growing-percent=100');
  if (typeof globalThis.gc !== 'function') {
    v8.setFlagsFromString('--expose-gc');
    globalThis.gc = process.getBuiltinModule('node:vm').runInNewContext('gc') as typeof globalThis.gc;
  }
}
