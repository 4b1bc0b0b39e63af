// A start that cannot listen must not have set anything up first: a second `svc serve` on a taken port would otherwise
// create and seed its data directory before it found out, and leave it behind. The ports are tried before anything is
// opened (bound and let go at once), so such a start fails as the listen itself would, having created nothing; a
// program that takes a port in the moment between is still met by the listen, with the same error. A port that is
// taken is never swapped for another: an app set up for it would talk to whatever holds it (docs/local-server.md).
import { createServer } from 'node:net';

/**
 * Resolves when every port (0: any free one, not tried) can be listened on at `host`; else rejects as listen() does for
 * the first that cannot, the error carrying the `flag` that asked for that port and, when ports are taken, the `flags`
 * of every one that is (so one message can name them all).
 */
export async function checkPortsFree(host: string, ports: readonly { port: number; flag: string }[]): Promise<void> {
  let taken: (Error & { flag: string; flags: string[] }) | undefined;
  for (const { port, flag } of ports) {
    if (port === 0) continue;
    const err = await new Promise<NodeJS.ErrnoException | null>((resolve) => {
      const probe = createServer();
      probe.once('error', resolve);
      probe.listen({ port, host, exclusive: true }, () => probe.close(() => resolve(null)));
    });
    if (!err) continue;
    if (err.code !== 'EADDRINUSE') throw Object.assign(err, { flag });
    taken ??= Object.assign(err, { flag, flags: [] });
    taken.flags.push(flag);
  }
  if (taken) throw taken;
}
