// mulberry32: a small seeded PRNG, so a fuzz run can be replayed from its seed.

export function prng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number) => Math.floor(next() * n);
  return {
    chance: (p: number) => next() < p,
    pick: <T>(items: readonly T[]): T => items[int(items.length)]!,
    int,
    /** A length, mostly small: up to `max`, each tenfold step as likely as the last. */
    size: (max: number) => Math.floor(10 ** (next() * Math.log10(max + 1))) - 1,
    bytes: (n: number) => Buffer.from(Array.from({ length: n }, () => int(256))),
  };
}
