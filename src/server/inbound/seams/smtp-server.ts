// The smtp-server seam: how the sink's and the submission listeners' connections are made. Fast path
// (smtp-server-fast.ts): greeted at once and the replies of one read in one write, through smtp-server's private
// connection class. Stock path: smtp-server's own connections, as its options make them (a greeting 100 ms after the
// connection; a client that talks before it is answered 421).
import { SMTPServer } from 'smtp-server';
import type { SMTPConnection } from 'smtp-server/lib/smtp-connection.js';
import type { Logger } from '../../../lib/log.js';
import { type SeamChoice, type SeamPath, choosePath, installedVersion, tellPath } from '../../seams/choose.js';
import { missingParts, useSinkConnections } from './smtp-server-fast.js';

/** The version smtp-server-fast.ts was written against (package.json pins it exactly). */
export const SMTP_SERVER_PINNED = '3.21.6';

/** The seam's path for a given smtp-server: its version and its classes (SMTPConnection undefined: it did not load). */
export function selectConnections(
  lib: { version: string | null; SMTPConnection: unknown; SMTPServer: unknown },
  env?: NodeJS.ProcessEnv,
): SeamChoice {
  return choosePath({
    pins: { 'smtp-server': SMTP_SERVER_PINNED },
    versions: { 'smtp-server': lib.version },
    probe: () =>
      lib.SMTPConnection === undefined
        ? 'lib/smtp-connection.js'
        : missingParts(lib as Parameters<typeof missingParts>[0]),
    env,
  });
}

let chosen: Promise<{ choice: SeamChoice; Connection?: typeof SMTPConnection }> | undefined;

/** The path taken in this process, with the connection class when it is the fast one. */
function choose(): Promise<{ choice: SeamChoice; Connection?: typeof SMTPConnection }> {
  chosen ??= (async () => {
    // The same build of the library (its ES modules) as SMTPServer above; a file it no longer has is a part missing.
    const Connection = await import('smtp-server/lib/smtp-connection.js').then(
      (m) => m.SMTPConnection,
      () => undefined,
    );
    const choice = selectConnections({
      version: installedVersion('smtp-server'),
      SMTPConnection: Connection,
      SMTPServer,
    });
    return choice.path === 'fast' ? { choice, Connection } : { choice };
  })();
  return chosen;
}

/** The path this process takes (smtp-server's, when the fast one is not for it). */
export async function connectionsPath(): Promise<SeamChoice> {
  return (await choose()).choice;
}

/**
 * Gives `server` the sink's connections (the fast path) when the installed smtp-server is the one they are written for;
 * else leaves it the library's own. Called before it listens; says (once) which path was taken.
 */
export async function useConnections(server: SMTPServer, log: Logger): Promise<SeamPath> {
  const { choice, Connection } = await choose();
  tellPath(log, 'smtp-server connections', choice);
  if (Connection) useSinkConnections(server, Connection);
  return choice.path;
}
