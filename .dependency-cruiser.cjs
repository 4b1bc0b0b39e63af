/** The layering rules of src/ (ARCHITECTURE.md, "Who imports what"), checked by `npm run lint`, part of `npm test`. */
module.exports = {
  forbidden: [
    {
      name: 'client-cli-not-server',
      comment: 'The client and the command line speak HTTP to the service; only `svc serve` starts the server.',
      severity: 'error',
      from: { path: '^src/(client|cli)/', pathNot: '^src/cli/commands/serve\\.ts$' },
      to: { path: '^src/server/' },
    },
    {
      name: 'only-core-over-stores',
      comment:
        'Routes, the sandbox zone, workers, the SMTP sink and the message checks go through core; core is the one way to the stores.',
      severity: 'error',
      from: { path: '^src/server/(http|sandbox|workers|smtp|checks)/', pathNot: '^src/server/workers/scheduler\\.ts$' },
      to: { path: '^src/server/store/' },
    },
    {
      name: 'contract-imports-nothing-of-ours',
      comment: 'The contract is shared by client and server: it depends on zod and node only.',
      severity: 'error',
      from: { path: '^src/contract/' },
      to: { path: '^src/', pathNot: '^src/contract/' },
    },
    {
      name: 'lib-below-the-sides',
      comment:
        'lib/ holds small modules both sides use: it may use the contract, nothing of the client, CLI or server.',
      severity: 'error',
      from: { path: '^src/lib/' },
      to: { path: '^src/(server|client|cli|testing)/' },
    },
    {
      name: 'mcp-sdk-in-svc-mcp-only',
      comment:
        'The MCP SDK is loaded by `svc mcp` alone: cli/mcp/server.ts registers the tools of cli/mcp/tools.ts with it ' +
        '(which knows nothing of it), so that no other command reads it.',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/cli/mcp/server\\.ts$' },
      to: { path: '(^|/)@modelcontextprotocol/' },
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
