// The known word nearest to a mistyped one: the service's unknown JSON fields (`emial` → `email`) and the command
// line's unknown subcommands (`svc inbox wiat` → `wait`).

/** Edit distance with adjacent transpositions (`emial` is one step from `email`). */
function distance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, d[i - 2]![j - 2]! + 1);
      d[i]![j] = v;
    }
  }
  return d[a.length]![b.length]!;
}

/** The known word nearest to an unknown one, when it is close: a third of the longer word, at least one edit. */
export function nearest(unknown: string, known: readonly string[]): string | undefined {
  if (unknown.length > 64) return undefined;
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const k of known) {
    const d = distance(unknown.toLowerCase(), k.toLowerCase());
    if (d < bestDistance && d <= Math.max(1, Math.floor(Math.max(unknown.length, k.length) / 3))) {
      best = k;
      bestDistance = d;
    }
  }
  return best;
}
