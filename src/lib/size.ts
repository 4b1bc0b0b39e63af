const UNITS: Record<string, number> = {
  '': 1,
  b: 1,
  kb: 1000,
  mb: 1000 ** 2,
  gb: 1000 ** 3,
  kib: 1024,
  mib: 1024 ** 2,
  gib: 1024 ** 3,
};

/**
 * A size in bytes as a person writes it: plain bytes (`1048576`), or a number and a unit, `KB`, `MB`, `GB` (powers of
 * 1000, as disks and mail providers count) or `KiB`, `MiB`, `GiB` (powers of 1024), in any case, with or without a
 * space (`50MB`, `10 MiB`, `1.5mb`). Null for anything else; a fraction of a byte is dropped.
 */
export function parseSize(text: string): number | null {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$/i.exec(text);
  if (!m) return null;
  const unit = UNITS[(m[2] ?? '').toLowerCase()];
  if (unit === undefined) return null;
  return Math.floor(Number(m[1]) * unit);
}
