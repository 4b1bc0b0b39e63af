// caniemail (the npm package, pinned exactly): what html-compatibility.ts takes of it. The build replaces this module's
// compiled file with one bundle of it, caniemail's code and support data, and the small packages that code runs on
// (scripts/bundle.mjs), so caniemail is a devDependency: installing svc-mail brings none of the formatter toolchain
// (prettier, Babel) caniemail 2.0.2 declares as dependencies though it never loads them.
import manifest from 'caniemail/package.json' with { type: 'json' };

export { caniemail, rawData } from 'caniemail';

/** The version of caniemail, its support data's with it. */
export const CANIEMAIL_VERSION: string = manifest.version;
