// Files readable only by the user, whatever the umask: the server's secrets, seed and certificate key, its database,
// the list of running servers, the CLI's config.
import { chmodSync, closeSync, existsSync, openSync, renameSync, rmSync, writeFileSync } from 'node:fs';

/**
 * Writes a file readable only by the user, whole or not at all: the text goes to a temporary file renamed over the
 * target, so a write cut short (a full disk) never leaves a half-written file for the next reader to choke on.
 */
export function writePrivateFile(file: string, text: string): void {
  const tmp = `${file}.${process.pid}.tmp`;
  try {
    writeFileSync(tmp, text, { mode: 0o600 });
    // `mode` applies only when a file is created, and through the umask: the bits are set outright.
    chmodSync(tmp, 0o600);
    renameSync(tmp, file);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
}

/**
 * A SQLite file readable only by the user whatever the umask (the database holds webhook signing secrets and keyed
 * hashes). SQLite creates the files beside it (`-wal`, `-shm`, `-journal`) with the mode of the database file, so
 * creating that file 0600 first covers them all; files an older version left readable by others are narrowed.
 */
export function keepPrivate(file: string): void {
  if (!existsSync(file)) closeSync(openSync(file, 'a', 0o600));
  for (const f of [file, `${file}-wal`, `${file}-shm`, `${file}-journal`]) {
    if (existsSync(f)) chmodSync(f, 0o600);
  }
}
