/** The package's version (package.json's; a test keeps them equal), printed by `svc --version`. */
export const VERSION = '0.1.0';
