const UNITS: Record<string, number> = {
  '': 1, b: 1,
  kb: 1e3, mb: 1e6, gb: 1e9,
  kib: 1024, mib: 1024 ** 2, gib: 1024 ** 3,
};

/** A size as people write it (`50MB`, `10MiB`, `500kb`, `1.5GB`, `1048576`) in bytes; null when it is not one. */
export function parseSize(text: string): number | null {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$/i.exec(text);
  const unit = m ? UNITS[m[2]!.toLowerCase()] : undefined;
  if (!m || unit === undefined) return null;
  return Math.floor(Number(m[1]) * unit);
}
