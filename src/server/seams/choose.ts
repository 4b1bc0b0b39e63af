// A seam: where the mail sides reach into a library's private parts for measured speed, that reach lives in a file of
// its own (`<library>-fast.ts`, in inbound/seams/ or outbound/seams/) beside the library's plain public path
// (`<library>.ts`), and this, shared by both sides, chooses between them once per process (per thread) for each seam.
// The fast path is taken only for the exact version it was written and tested against, and only when the private parts
// it uses are there; another version, a missing part, or SVC_STOCK_SEAMS=1 takes the stock path. An upgrade costs
// speed, never correctness. README.md (beside this file) lists the seams.
import { createRequire } from 'node:module';
import type { Logger } from '../../lib/log.js';

export type SeamPath = 'fast' | 'stock';

/** The path a seam takes, and why, in words for the log. */
export interface SeamChoice {
  path: SeamPath;
  why: string;
}

/**
 * Set to anything but `0` or `false`, every seam takes the stock path (the `stock` test project sets it); set to library
 * names (`mailparser`, `smtp-server,nodemailer`), only their seams do, so a bench can weigh each seam alone.
 */
export const STOCK_SEAMS_ENV = 'SVC_STOCK_SEAMS';

/** The libraries that have a seam (their pins are in the `<library>.ts` beside each seam). */
const SEAM_LIBRARIES = ['smtp-server', 'mailparser', 'nodemailer'];

/** Whether the stock path is forced: for every seam, or (given `libraries`) for a seam of one of them. */
export function stockForced(env: NodeJS.ProcessEnv = process.env, libraries?: string[]): boolean {
  const value = env[STOCK_SEAMS_ENV];
  if (value === undefined || value === '' || value === '0' || value.toLowerCase() === 'false') return false;
  const named = value.split(',').map((v) => v.trim().toLowerCase());
  if (!named.every((n) => SEAM_LIBRARIES.includes(n))) return true;
  return libraries === undefined || libraries.some((l) => named.includes(l));
}

/**
 * The path of a seam whose fast path was written against `pins` (library → exact version): fast when no override
 * forces the stock path, every library is at its pinned version (`versions`, as installed) and `probe` finds every
 * private part the fast path uses (it returns the first one missing, or null). A probe that throws finds it missing.
 */
export function choosePath(o: {
  pins: Record<string, string>;
  versions: Record<string, string | null>;
  probe: () => string | null;
  env?: NodeJS.ProcessEnv;
}): SeamChoice {
  if (stockForced(o.env ?? process.env, Object.keys(o.pins)))
    return { path: 'stock', why: `${STOCK_SEAMS_ENV} is set` };
  for (const [library, pinned] of Object.entries(o.pins)) {
    const version = o.versions[library] ?? null;
    if (version !== pinned) {
      return {
        path: 'stock',
        why: `${library} ${version ?? '(version unknown)'} is installed; the fast path is written for ${pinned}`,
      };
    }
  }
  let missing: string | null;
  try {
    missing = o.probe();
  } catch (err) {
    missing = `what its probe needs (${(err as Error).message})`;
  }
  const as = Object.entries(o.pins)
    .map(([library, pinned]) => `${library} ${pinned}`)
    .join(', ');
  return missing ? { path: 'stock', why: `${as} lacks ${missing}` } : { path: 'fast', why: `${as}, as pinned` };
}

// Resolved from here, as the seams' own imports of the libraries are.
const require = createRequire(import.meta.url);

/** The version of an installed package, from its package.json; null when that cannot be read. */
export function installedVersion(name: string): string | null {
  try {
    const { version } = require(`${name}/package.json`) as { version?: unknown };
    return typeof version === 'string' ? version : null;
  } catch {
    return null;
  }
}

const told = new Set<string>();

/** Says which path a seam took, once per process (per thread), as a debug line. */
export function tellPath(log: Logger, seam: string, choice: SeamChoice): void {
  if (told.has(seam)) return;
  told.add(seam);
  log.debug(`library seam: ${seam} takes its ${choice.path} path`, { seam, path: choice.path, why: choice.why });
}
