// A start that cannot listen must not have set anything up first: a second `svc serve` on a taken port would otherwise
// create and seed its data directory before it found out, and leave it behind. The ports are tried before anything is
// opened (bound and let go at once), so such a start fails as the listen itself would, having created nothing; a
// program that takes a port in the moment between is still met by the listen, with the same error.
import { createServer } from 'node:net';

/**
 * Resolves when every port (0: any free one, not tried) can be listened on at `host`; else rejects as listen() does,
 * the error carrying the `flag` that asked for that port.
 */
export async function checkPortsFree(host: string, ports: readonly { port: number; flag: string }[]): Promise<void> {
  for (const { port, flag } of ports) {
    if (port === 0) continue;
    await new Promise<void>((resolve, reject) => {
      const probe = createServer();
      probe.once('error', (err) => reject(Object.assign(err, { flag })));
      probe.listen({ port, host, exclusive: true }, () => probe.close(() => resolve()));
    });
  }
}
