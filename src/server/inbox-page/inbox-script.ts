// The inbox page's script as the browser gets it (/inbox.js): browser/main.ts and the modules it imports, bundled
// by esbuild into one script. The build writes it beside the compiled server (scripts/bundle.mjs, through this
// module's compiled copy); the server run from its sources (vitest, tsx) bundles it in memory, the same way.
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

type Esbuild = typeof import('esbuild');

/** The built script, beside this module in dist/server/inbox-page/. */
export const INBOX_SCRIPT_FILE = 'inbox-page.js';

/**
 * The page script: one IIFE for the browsers the page supports (es2022), its whitespace and syntax minified like the
 * command line's bundle. It must hold nothing from node_modules: the page takes only types from the contract, which
 * are erased, and zod (or any package) showing up among its inputs fails the build.
 */
export async function bundleInboxScript(esbuild: Esbuild, entry: string): Promise<string> {
  const result = await esbuild.build({
    entryPoints: [entry],
    bundle: true,
    write: false,
    format: 'iife',
    platform: 'browser',
    target: 'es2022',
    minifyWhitespace: true,
    minifySyntax: true,
    legalComments: 'none',
    metafile: true,
    logLevel: 'warning',
  });
  const packages = Object.keys(result.metafile.inputs).filter((f) => f.includes('node_modules'));
  if (packages.length) throw new Error(`The inbox page's script bundles packages: ${packages.join(', ')}`);
  const [script] = result.outputFiles;
  if (!script) throw new Error("esbuild wrote no file for the inbox page's script");
  return script.text;
}

let script: Promise<string> | undefined;

/**
 * The script, read or bundled on the first request for it, then kept. Nothing is done before: starting the server
 * reads no file and starts no esbuild, and most servers (the test suite's, `svc-mail/testing`'s) never serve the page.
 * A failure is not kept: the next request tries again.
 */
export function inboxScript(): Promise<string> {
  script ??= loadScript().catch((err: unknown) => {
    script = undefined;
    throw err;
  });
  return script;
}

async function loadScript(): Promise<string> {
  try {
    return await readFile(new URL(`./${INBOX_SCRIPT_FILE}`, import.meta.url), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  // Run from source: esbuild, a devDependency, is loaded only here, so an installed package never needs it.
  const entry = fileURLToPath(new URL('./browser/main.ts', import.meta.url));
  return bundleInboxScript(await import('esbuild'), entry);
}
