// What an install put on disk: `node scripts/installed-size.mjs NODE_MODULES LIMIT_MB` prints the bytes of every file
// under NODE_MODULES (symbolic links counted as nothing), how many packages they make, and the ten largest packages
// (each without the packages nested in it), and exits 1 when the whole is over LIMIT_MB (1 MB = 1,000,000 bytes, as npm
// counts). scripts/try-package.sh runs it on a fresh project with the packed svc-mail installed and nothing else.
import { lstatSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';

const [dir, limitArg] = process.argv.slice(2);
const limit = Number(limitArg);
if (!dir || !(limit > 0)) {
  console.error('usage: node scripts/installed-size.mjs NODE_MODULES LIMIT_MB');
  process.exit(2);
}

/** Every package's own bytes, by its path under `dir` (`a`, `@s/b`, `a/node_modules/c`). */
const packages = new Map();
let total = 0;

/** Adds the files under `path` to the total and to `owner`, the package they belong to (none above the first). */
function walk(path, owner) {
  for (const e of readdirSync(path, { withFileTypes: true })) {
    const p = join(path, e.name);
    if (e.isDirectory()) {
      // A folder of node_modules (or of a scope in it) is a package; .bin and npm's own are not.
      const inModules = !e.name.startsWith('.') && /(^|\/)node_modules(\/@[^/]+)?$/.test(path);
      const isScope = inModules && e.name.startsWith('@');
      const own = inModules && !isScope ? relative(dir, p) : owner;
      if (own !== owner) packages.set(own, 0);
      walk(p, own);
    } else if (e.isFile()) {
      const size = lstatSync(p).size;
      total += size;
      if (owner !== null) packages.set(owner, packages.get(owner) + size);
    }
  }
}
walk(join(dir), null);

const mb = (bytes) => `${(bytes / 1e6).toFixed(1)} MB`;
console.log(`installed: ${mb(total)} in ${packages.size} packages (limit ${limit} MB)`);
console.log('the ten largest:');
for (const [name, bytes] of [...packages].sort((a, b) => b[1] - a[1]).slice(0, 10)) {
  console.log(`  ${mb(bytes).padStart(8)}  ${name}`);
}
if (total > limit * 1e6) {
  console.error(`the install is ${mb(total)}, over the limit of ${limit} MB`);
  process.exit(1);
}
