// The build before `npm start` and `npm pack` (package.json's prestart and prepack), so that a checkout runs and packs
// what its sources say. Not `prepare`: npm counts that among the install scripts of a package installed from a tarball
// or a git URL, and warns of it to whoever installs svc-mail. It builds only when dist/ is missing or was built from
// other sources: a second `npm start` then costs nothing, where a build takes most of a minute. The build's inputs are
// hashed (their contents, not their times: a fresh clone's files are all new); `npm run build` always builds.
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const stamp = join(root, 'dist', '.build-hash');

function* files(dir) {
  for (const e of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    const path = join(dir, e.name);
    if (e.isDirectory()) yield* files(path);
    else if (!e.name.endsWith('.test.ts')) yield path;
  }
}

const hash = createHash('sha256');
const inputs = [...files(join(root, 'src')), ...files(join(root, 'scripts'))];
for (const name of ['package.json', 'tsconfig.json', 'tsconfig.build.json']) inputs.push(join(root, name));
for (const path of inputs) hash.update(relative(root, path)).update('\0').update(readFileSync(path)).update('\0');
const digest = hash.digest('hex');

if (existsSync(join(root, 'dist', 'cli', 'svc.js')) && existsSync(stamp) && readFileSync(stamp, 'utf8') === digest) {
  console.error('svc: dist/ is up to date (npm run build builds it again)');
} else {
  execFileSync('npm', ['run', 'build'], { cwd: root, stdio: 'inherit' });
  writeFileSync(stamp, digest);
}
