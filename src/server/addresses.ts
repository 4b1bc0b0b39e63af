// Where a server that `svc serve` starts (index.ts) is reached: the host its listeners bind, the ports they have bound
// (an attachment's url may not lead back to one of them), and the API's origin, whose port is known once the API is
// bound (it may be 0 until then). Core, the workers and the API read the origin through `origin`, which only what runs
// once the API listens calls.

export interface Addresses {
  /** The host every listener binds. */
  readonly host: string;
  /** The host as a URL writes it: an IPv6 address in brackets. */
  readonly urlHost: string;
  /** The API's origin; throws before the API listens. */
  origin(): string;
  /** Whether the API listens (its origin is known). */
  apiListening(): boolean;
  /** Every port bound so far. */
  ownPorts(): ReadonlySet<number>;
  /** Adds a listener's port once it is bound. */
  bound(port: number): void;
  /** Adds the API's port once it is bound: the origin is known from then on. */
  apiBound(port: number): void;
}

export function addresses(host: string, scheme: 'http' | 'https'): Addresses {
  const urlHost = host.includes(':') ? `[${host}]` : host;
  let listeningAt: string | undefined;
  const ownPorts = new Set<number>();
  return {
    host,
    urlHost,
    origin() {
      if (listeningAt === undefined) throw new Error('the API has no origin before it listens');
      return listeningAt;
    },
    apiListening: () => listeningAt !== undefined,
    ownPorts: () => ownPorts,
    bound(port) {
      ownPorts.add(port);
    },
    apiBound(port) {
      listeningAt = `${scheme}://${urlHost}:${port}`;
      ownPorts.add(port);
    },
  };
}
