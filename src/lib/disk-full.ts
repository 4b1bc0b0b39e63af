/**
 * Whether an error means the disk (or the database's size limit) has no room for a write: SQLite reports both as
 * SQLITE_FULL ("database or disk is full"), the file system as ENOSPC. Such a write can succeed later, once space is
 * freed, so it is never the fault of the request or the job that asked for it.
 */
export function isDiskFull(err: unknown): boolean {
  if (!err || typeof err !== 'object') return false;
  const code = (err as { code?: unknown }).code;
  return code === 'SQLITE_FULL' || code === 'ENOSPC' || (err as { diskFull?: unknown }).diskFull === true;
}
