/** The package's version (package.json's: test/cli/argv.test.ts keeps the two equal). A constant, not a file read at start. */
export const VERSION = '0.1.0';
