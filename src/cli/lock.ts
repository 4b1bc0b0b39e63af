import { open, readFile, stat, unlink } from 'node:fs/promises';
import { setTimeout as delay } from 'node:timers/promises';

/** A lock older than this belongs to a process that died holding it (a refresh takes seconds at most). */
const STALE_MS = 30_000;

/**
 * Runs `fn` holding an exclusive lock shared by every process on this machine: a file created with O_EXCL, removed
 * afterwards. A lock left by a process that died (its pid is gone, or the file is older than 30 s) is broken.
 */
export async function withFileLock<T>(path: string, fn: () => Promise<T>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const handle = await open(path, 'wx', 0o600);
      await handle.writeFile(String(process.pid));
      await handle.close();
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      if (await abandoned(path)) {
        await unlink(path).catch(() => undefined);
        continue;
      }
      if (Date.now() > deadline)
        throw new Error(
          `another svc process has held ${path} for ${timeoutMs / 1000} s; if none is running, delete that file`,
        );
      // Another process holds it (a refresh takes one request): look again shortly, at a random moment.
      await delay(20 + Math.random() * 30);
    }
  }
  try {
    return await fn();
  } finally {
    await unlink(path).catch(() => undefined);
  }
}

async function abandoned(path: string): Promise<boolean> {
  const info = await stat(path).catch(() => undefined);
  if (!info) return false;
  if (Date.now() - info.mtimeMs > STALE_MS) return true;
  const pid = Number(await readFile(path, 'utf8').catch(() => ''));
  if (!Number.isInteger(pid) || pid <= 0) return false; // being written right now
  try {
    process.kill(pid, 0);
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ESRCH';
  }
}
