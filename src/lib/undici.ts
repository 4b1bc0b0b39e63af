// The undici package, for outbound HTTP that needs more than fetch (a pool per webhook receiver, the links check's
// connector), loaded when first used and once. Loading it makes it the process's global dispatcher when Node's own
// fetch has not set one up yet; on Node 22 the built-in fetch (an older undici inside) then runs on this one's agent,
// which refuses, for one, a request that carries its own Content-Length — in an app that runs svc-mail/testing in its own
// process too. A fetch of a `data:` URL first (it reaches no network) makes Node's fetch set up its own dispatcher, so
// this package leaves it in place (`src/lib/undici.test.ts`).
type Undici = typeof import('undici');

let loading: Promise<Undici> | undefined;

/** The undici package, Node's own fetch left on its own dispatcher. */
export function loadUndici(): Promise<Undici> {
  loading ??= (async () => {
    await (await fetch('data:,')).arrayBuffer();
    return import('undici');
  })();
  return loading;
}
