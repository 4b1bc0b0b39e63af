// Worker threads of `svc serve` (compose, checkpoint, checks). The binary runs the compiled script beside the module
// that starts it (dist/…/x.js); the test suite runs the TypeScript sources, where the thread loads x.ts through tsx —
// so the tests exercise the same threads the binary runs.
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker, type WorkerOptions } from 'node:worker_threads';

/** Starts the thread script `script` (a `.js` URL beside the caller), or its `.ts` source when not compiled. */
export function startThread(script: URL, options: WorkerOptions = {}): Worker {
  if (existsSync(fileURLToPath(script))) return new Worker(script, options);
  const source = new URL(script.href.replace(/\.js$/, '.ts'));
  // tsx's register() installs its loader in the thread that calls it; Node 20 does not apply `--import` hooks to a
  // worker's entry, so a small entry registers tsx, then imports the source.
  const code = `import(${JSON.stringify(tsxApi())}).then((tsx) => { tsx.register(); return import(${JSON.stringify(source.href)}); })`;
  return new Worker(code, { ...options, eval: true });
}

/** The ESM entry of `tsx/esm/api`, from tsx's own exports map (require.resolve would give its CommonJS entry). */
function tsxApi(): string {
  const manifest = createRequire(import.meta.url).resolve('tsx/package.json');
  const api = (
    JSON.parse(readFileSync(manifest, 'utf8')) as { exports: Record<string, { import: { default: string } }> }
  ).exports['./esm/api'];
  if (!api) throw new Error(`${manifest} exports no ./esm/api`);
  const entry = api.import.default;
  return pathToFileURL(fileURLToPath(new URL(entry, pathToFileURL(manifest)))).href;
}
