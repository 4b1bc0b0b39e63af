/**
 * The layering rules of src/ (ARCHITECTURE.md, "Who imports what"), checked by `npm run lint`, part of `npm test`.
 * Each rule names folders, never a file: where a file needed an exception, the file moved to the room the rule allows.
 * A type-only import counts like any other (tsPreCompilationDeps keeps them, and no rule but no-circular leaves them
 * out): a type belongs to the layer that may be imported. test/layering.test.ts plants a breach of each rule.
 */

/** The server's edges: what speaks a protocol or runs work (they call core), and the checks. */
const EDGES = '^src/server/(http|inbox-page|inbound|outbound|workers|checks)/';

module.exports = {
  forbidden: [
    {
      name: 'client-cli-not-server',
      comment:
        'The client and the command line speak HTTP to the service; only `svc serve` (cli/serve/) starts the server.',
      severity: 'error',
      from: { path: '^src/(client|cli)/', pathNot: '^src/cli/serve/' },
      to: { path: '^src/server/' },
    },
    {
      name: 'server-not-client',
      comment:
        'The server uses nothing of the client, the command line or svc-mail/testing; what both sides use is in lib/.',
      severity: 'error',
      from: { path: '^src/server/' },
      to: { path: '^src/(client|cli|testing)/' },
    },
    {
      name: 'shared-below-the-sides',
      comment:
        'The contract (zod schemas and types) and lib/ (small modules) are what client and server share: they import ' +
        'nothing of either side.',
      severity: 'error',
      from: { path: '^src/(contract|lib)/' },
      to: { path: '^src/(server|client|cli|testing)/' },
    },
    {
      name: 'mcp-sdk-in-svc-mcp-only',
      comment: 'The MCP SDK is loaded by `svc mcp` alone (cli/mcp/), so that no other command reads it.',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/cli/mcp/' },
      to: { path: '(^|/)@modelcontextprotocol/' },
    },
    {
      name: 'core-imports-store-lib-contract',
      comment:
        'Core holds the rules: it imports the stores, lib and the contract, never an edge or the composition root ' +
        '(they call core, and hand it what it needs through deps).',
      severity: 'error',
      from: { path: '^src/server/core/' },
      to: { path: '^src/', pathNot: '^src/(server/(core|store)|lib|contract)/' },
    },
    {
      name: 'store-imports-nothing-above',
      comment:
        'A store knows SQL and its row types only: it imports no core (a type a row keeps is the store’s, core takes ' +
        'it from there), nor anything above.',
      severity: 'error',
      from: { path: '^src/server/store/' },
      to: { path: '^src/server/', pathNot: '^src/server/store/' },
    },
    {
      name: 'stores-behind-core',
      comment:
        'Core is the one way to the stores: the edges and the composition root (which opens the database through ' +
        'core/storage.ts) reach none.',
      severity: 'error',
      from: { path: '^src/server/', pathNot: '^src/server/(core|store)/' },
      to: { path: '^src/server/store/' },
    },
    {
      name: 'edges-call-core',
      comment:
        'An edge (http, inbox-page, inbound, outbound, workers, checks) calls core, lib and the contract: never another ' +
        'edge but the outbound side (outbound-side-for-workers), nor the composition root that wires them. The ' +
        'seams/ folder is the library seams’ shared switch.',
      severity: 'error',
      from: { path: EDGES },
      to: {
        path: '^src/server/',
        pathNot: ['^src/server/$1/', '^src/server/(core|outbound|seams)/'],
      },
    },
    {
      name: 'outbound-side-for-workers',
      comment: 'The workers hand messages to the outbound side (outbound/); no other edge does.',
      severity: 'error',
      from: { path: EDGES, pathNot: '^src/server/(workers|outbound)/' },
      to: { path: '^src/server/outbound/' },
    },
    {
      name: 'no-circular',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true, dependencyTypesNot: ['type-only'] },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '\\.test\\.ts$' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js'] },
  },
};
