import { readFileSync } from 'node:fs';

/** The package's version, from its package.json (two folders up from both src/lib and dist/lib). */
export const VERSION: string = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
