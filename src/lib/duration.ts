// Durations as people write them: seconds, or a number with a unit (`30s`, `10m`, `1h`, `2d`).

const UNITS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86400 };

/** Milliseconds of `30s`, `10m`, `1h`, `2d` or a number of seconds (`90`, `1.5`); null when it is none of them. */
export function parseDuration(text: string): number | null {
  const m = /^(\d+(?:\.\d+)?)([smhd]?)$/.exec(text.trim());
  return m ? Math.round(Number(m[1]) * UNITS[m[2] || 's']! * 1000) : null;
}
