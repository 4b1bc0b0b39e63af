// The command line as it ships: src/main.ts and everything it loads, bundled by esbuild into dist/cli/svc.js, so a
// run reads one file instead of resolving and loading some hundred modules. What a command loads only when it needs
// it (the API client with the contract, the prompts, cli-table3 and string-width, ora, `svc mcp` with the MCP SDK)
// stays behind a dynamic import, in a chunk of its own beside svc.js. `svc serve` imports the server as tsc compiled
// it (dist/server/), and native packages are imported from node_modules as installed. Then caniemail, bundled with its
// data into the compiled server (dist/server/checks/caniemail.js), and the inbox page's script:
// src/server/inbox-page/browser/ as one script for the browser, written beside the compiled server, which serves it
// as /inbox.js. Runs after tsc (`npm run build`).
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { builtinModules, createRequire } from 'node:module';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const outdir = join(root, 'dist', 'cli');
const serverDir = join(root, 'src', 'server') + sep;

/** esbuild: the project's own, or tsx's in a tree installed before esbuild was a devDependency of its own. */
async function loadEsbuild() {
  try {
    return await import('esbuild');
  } catch (err) {
    if (err?.code !== 'ERR_MODULE_NOT_FOUND') throw err;
    const fromTsx = createRequire(createRequire(import.meta.url).resolve('tsx/package.json'));
    return fromTsx('esbuild');
  }
}

/** `svc serve`'s imports of the server stay imports, of the compiled module beside the bundle (dist/server/…). */
const serverAsCompiled = {
  name: 'server-as-compiled',
  setup(b) {
    b.onResolve({ filter: /\/server\// }, (args) => {
      const file = resolve(args.resolveDir, args.path);
      if (!file.startsWith(serverDir) || args.importer.startsWith(serverDir)) return undefined;
      const compiled = relative(outdir, join(root, 'dist', relative(join(root, 'src'), file)))
        .split(sep)
        .join('/');
      return { path: compiled.startsWith('.') ? compiled : `./${compiled}`, external: true };
    });
  },
};

/**
 * Node's own modules, as the bundle takes them: through process.getBuiltinModule(), not imported as ES modules. Node
 * makes an ES module of a built-in by reading every one of its exports, which runs the lazy getters behind some:
 * `import { isIP } from 'node:net'` loaded net's BlockList and SocketAddress, `node:fs` its streams and promises
 * (bench/README.md, bench:cli-start). A module a CommonJS package of the bundle requires at start but a run seldom
 * uses stands in as a proxy that loads it on first use: child_process, which commander requires for executable
 * subcommands (svc has none).
 */
const WHEN_USED = new Set(['node:child_process']);
const nodeBuiltins = {
  name: 'node-builtins',
  setup(b) {
    const builtins = new Set(builtinModules);
    b.onResolve({ filter: /^(node:)?[a-z_]+(\/[a-z_]+)?$/ }, (args) => {
      const name = args.path.replace(/^node:/, '');
      return builtins.has(name) ? { path: `node:${name}`, namespace: 'node-builtin' } : undefined;
    });
    b.onLoad({ filter: /.*/, namespace: 'node-builtin' }, ({ path }) => ({
      contents: WHEN_USED.has(path)
        ? `let m; const load = () => (m ??= process.getBuiltinModule(${JSON.stringify(path)}));
           module.exports = new Proxy({}, {
             get: (_, k) => load()[k],
             has: (_, k) => k in load(),
             ownKeys: () => Reflect.ownKeys(load()),
             getPrototypeOf: () => Reflect.getPrototypeOf(load()),
             getOwnPropertyDescriptor: (_, k) => {
               const d = Reflect.getOwnPropertyDescriptor(load(), k);
               return d && { ...d, configurable: true };
             },
           });`
        : `module.exports = process.getBuiltinModule(${JSON.stringify(path)});`,
      loader: 'js',
    }));
  },
};

const esbuild = await loadEsbuild();
// Start from an empty directory: the chunks' names change with their content.
rmSync(outdir, { recursive: true, force: true });
const result = await esbuild.build({
  entryPoints: { svc: join(root, 'src', 'main.ts') },
  outdir,
  bundle: true,
  splitting: true,
  chunkNames: '[name]-[hash]',
  format: 'esm',
  platform: 'node',
  target: 'node22.14',
  // Whitespace and syntax only: fewer bytes for V8 to scan at start, while names stay readable in a stack trace.
  minifyWhitespace: true,
  minifySyntax: true,
  sourcemap: 'linked',
  legalComments: 'linked',
  // Native addons, and undici (only `webhooks listen --forward-to` sends through it), load from node_modules.
  external: ['@napi-rs/keyring', 'better-sqlite3', 'undici'],
  plugins: [serverAsCompiled, nodeBuiltins],
  metafile: true,
  logLevel: 'warning',
});

if (process.argv.includes('--analyze')) console.log(await esbuild.analyzeMetafile(result.metafile));

/**
 * caniemail 2.0.2 reads its support data with a require() made by createRequire, which a bundle cannot follow: its
 * json.js becomes the data itself, as a JSON.parse of its text (which V8 reads faster than the same object written out
 * in JavaScript). A caniemail that reads its data otherwise fails the build here.
 */
const caniemailData = {
  name: 'caniemail-data',
  setup(b) {
    b.onLoad({ filter: /[\\/]caniemail[\\/]dist[\\/]json\.js$/ }, ({ path }) => {
      const read = "require('../data/caniemail.json')";
      if (!readFileSync(path, 'utf8').includes(read)) throw new Error(`${path} no longer reads ${read}`);
      const data = JSON.stringify(
        JSON.parse(readFileSync(join(dirname(path), '..', 'data', 'caniemail.json'), 'utf8')),
      );
      return { contents: `export const caniEmailJson = JSON.parse(${JSON.stringify(data)});`, loader: 'js' };
    });
  },
};

/** The licence of each package a bundle took code from, for the notice at its head (its text, where it has one). */
function licences(metafile) {
  const packages = new Map();
  for (const input of Object.keys(metafile.inputs)) {
    const m = /^(.*node_modules\/((?:@[^/]+\/)?[^/]+))\//.exec(input);
    if (!m || packages.has(m[2])) continue;
    const dir = join(root, m[1]);
    const { version, license } = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
    const file = readdirSync(dir).find((f) => /^licen[cs]e/i.test(f));
    const text = file ? `\n\n${readFileSync(join(dir, file), 'utf8').trim()}` : '';
    packages.set(m[2], `${m[2]} ${version} (${license})${text}`);
  }
  return [...packages.values()];
}

// src/server/checks/caniemail.ts, as tsc compiled it, gives way to one bundle of it with caniemail, its data and the
// packages its code runs on: caniemail is a devDependency (src/server/checks/caniemail.ts says why). htmlparser2, a
// dependency of svc-mail's own, is imported from node_modules.
const caniemailOut = join(root, 'dist', 'server', 'checks', 'caniemail.js');
const caniemailBuild = await esbuild.build({
  entryPoints: [join(root, 'src', 'server', 'checks', 'caniemail.ts')],
  bundle: true,
  write: false,
  format: 'esm',
  platform: 'node',
  target: 'node22.14',
  external: ['htmlparser2'],
  plugins: [nodeBuiltins, caniemailData],
  absWorkingDir: root,
  metafile: true,
  logLevel: 'warning',
});
const notice = licences(caniemailBuild.metafile)
  .map((l) => l.replace(/\*\//g, '* /'))
  .join('\n\n---\n\n');
writeFileSync(
  caniemailOut,
  `/*\n * This file bundles the following packages, under these licences.\n\n${notice}\n*/\n${caniemailBuild.outputFiles[0].text}`,
);
rmSync(`${caniemailOut}.map`, { force: true });

// The inbox page's script, bundled by the compiled inbox-script.js: the same options the server run from source
// bundles it with, and the same check that nothing of node_modules (zod) came in.
const inboxPage = join(root, 'dist', 'server', 'inbox-page');
const { bundleInboxScript, INBOX_SCRIPT_FILE } = await import(pathToFileURL(join(inboxPage, 'inbox-script.js')).href);
const script = await bundleInboxScript(esbuild, join(root, 'src', 'server', 'inbox-page', 'browser', 'main.ts'));
writeFileSync(join(inboxPage, INBOX_SCRIPT_FILE), script);
