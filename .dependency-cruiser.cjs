/**
 * The layering rules of src/ (ARCHITECTURE.md, "Who imports what"), checked by `npm run lint`, part of `npm test`.
 * A type-only import counts like any other (tsPreCompilationDeps keeps them, and no rule but no-circular leaves them
 * out): a type belongs to the layer that may be imported. test/layering.test.ts plants a breach of each rule.
 */

/** The server's edges: they call core and never one another, but for the exceptions named below. */
const EDGES = '^src/server/(http|sandbox|smtp|workers|checks)/';

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
      name: 'server-not-client',
      comment:
        'The server uses nothing of the client, the command line or svc-mail/testing; what both sides use is in lib/.',
      severity: 'error',
      from: { path: '^src/server/' },
      to: { path: '^src/(client|cli|testing)/' },
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
      name: 'core-imports-store-lib-contract',
      comment:
        'Core holds the rules: it imports the stores, lib and the contract, never the HTTP API, the sandbox, SMTP, ' +
        'the workers, the checks or the composition root (they call core, and hand it what it needs through deps).',
      severity: 'error',
      from: { path: '^src/server/core/' },
      to: { path: '^src/', pathNot: '^src/(server/(core|store)|lib|contract)/' },
    },
    {
      name: 'store-imports-no-core',
      comment:
        'A store knows SQL and its row types only: it imports no core (a type a row keeps is the store’s, core takes ' +
        'it from there), nor anything above; threads.ts runs its checkpoint thread.',
      severity: 'error',
      from: { path: '^src/server/store/' },
      to: { path: '^src/server/', pathNot: '^src/server/(store/|threads\\.ts$)' },
    },
    {
      name: 'only-core-over-stores',
      comment:
        'Routes, the sandbox, workers, the SMTP side and the message checks go through core; core is the one way to ' +
        'the stores. The scheduler alone takes the job store it claims from (scheduler-takes-only-the-job-store).',
      severity: 'error',
      from: { path: EDGES, pathNot: '^src/server/workers/scheduler\\.ts$' },
      to: { path: '^src/server/store/' },
    },
    {
      name: 'scheduler-takes-only-the-job-store',
      comment: 'Claiming and finishing jobs is the scheduler’s own work: the job store (and the group commit’s type).',
      severity: 'error',
      from: { path: '^src/server/workers/scheduler\\.ts$' },
      to: { path: '^src/server/store/', pathNot: '^src/server/store/(jobs|db)\\.ts$' },
    },
    {
      name: 'index-imports-no-store',
      comment: 'server/index.ts listens on the backend (backend.ts), which opens the store: it imports no store.',
      severity: 'error',
      from: { path: '^src/server/index\\.ts$' },
      to: { path: '^src/server/store/' },
    },
    {
      name: 'backend-builds-only-the-job-store',
      comment:
        'The backend opens the database (db.ts, its checkpoint thread) and builds only the job store outside core, ' +
        'for the schedulers; every other store is built by createCore.',
      severity: 'error',
      from: { path: '^src/server/backend\\.ts$' },
      to: { path: '^src/server/store/', pathNot: '^src/server/store/(db|jobs|checkpointer)\\.ts$' },
    },
    {
      name: 'stores-behind-core',
      comment:
        'Nothing else of the server reaches a store; data-dir.ts names the database file and keeps it private (the ' +
        'data directory’s lock is a database of its own).',
      severity: 'error',
      from: {
        path: '^src/server/',
        pathNot: `^src/server/(core|store)/|${EDGES}|^src/server/(index|backend)\\.ts$`,
      },
      to: { path: '^src/server/store/', pathNot: '^src/server/store/db\\.ts$' },
    },
    {
      name: 'edges-apart',
      comment:
        'The edges (http, sandbox, smtp, workers, checks) call core, not one another; the exceptions are their own ' +
        'rules: the chaos rules, the route types and the outbound side.',
      severity: 'error',
      from: { path: EDGES },
      to: {
        path: EDGES,
        pathNot: [
          '^src/server/$1/',
          '^src/server/sandbox/chaos\\.ts$',
          '^src/server/http/handlers\\.ts$',
          '^src/server/smtp/(compose|sender)\\.ts$',
        ],
      },
    },
    {
      name: 'chaos-followed-by-api-and-sink',
      comment:
        'The chaos rules (sandbox/chaos.ts) are followed by the HTTP API (http/app.ts, http/chaos.ts) and the SMTP ' +
        'sink (smtp/sink.ts), one instance per server, handed to them by the composition root.',
      severity: 'error',
      from: { path: EDGES, pathNot: '^src/server/(sandbox/[^/]+|http/(app|chaos)|smtp/sink)\\.ts$' },
      to: { path: '^src/server/sandbox/chaos\\.ts$' },
    },
    {
      name: 'chaos-imports-nothing-of-the-server',
      comment: 'sandbox/chaos.ts decides which rule answers a request or an SMTP stage from its rules alone.',
      severity: 'error',
      from: { path: '^src/server/sandbox/chaos\\.ts$' },
      to: { path: '^src/server/', pathNot: '^src/server/sandbox/chaos\\.ts$' },
    },
    {
      name: 'route-types-for-routes',
      comment: 'The sandbox routes are HTTP routes: they, and only they besides http/, take http/handlers.ts’s types.',
      severity: 'error',
      from: { path: EDGES, pathNot: '^src/server/(http|sandbox)/' },
      to: { path: '^src/server/http/handlers\\.ts$' },
    },
    {
      name: 'outbound-side-for-workers',
      comment: 'The workers hand messages to the outbound side (smtp/sender.ts, smtp/compose.ts); no other edge does.',
      severity: 'error',
      from: { path: EDGES, pathNot: '^src/server/(workers|smtp)/' },
      to: { path: '^src/server/smtp/(compose|sender)\\.ts$' },
    },
    {
      name: 'edges-not-the-root',
      comment:
        'The composition root (index.ts, backend.ts and their helpers) wires the edges; an edge imports none of it, ' +
        'but the two helpers every side may use: threads.ts (worker threads) and secrets.ts (0600 files).',
      severity: 'error',
      from: { path: EDGES },
      to: { path: '^src/server/[^/]+\\.ts$', pathNot: '^src/server/(threads|secrets)\\.ts$' },
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
