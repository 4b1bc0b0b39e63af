import { defineConfig } from 'vitest/config';

// Five projects, so a change can be checked by the part it touches: `npm run test:fast` runs `unit` and
// `integration` (everything in this process: the app, the sink over a socket, the stores), `npm test` runs all.
// The files of a worker share its modules (isolate: false): the server, its dependencies and what it makes once per
// process (the in-memory seed's TLS certificate) are loaded once per worker instead of once per file. Every file starts
// its own servers and closes them, and no test leaves a module's state changed for the next file.
const shared = { testTimeout: 20_000, hookTimeout: 30_000, isolate: false };

export default defineConfig({
  test: {
    // One test file per core at once. Vitest's own default keeps a core free (one worker on a 2-core machine), and
    // these files spend much of their time waiting on sockets, threads and child processes.
    maxWorkers: '100%',
    projects: [
      { test: { ...shared, name: 'unit', include: ['src/**/*.test.ts'] } },
      {
        test: {
          ...shared,
          name: 'integration',
          include: ['test/integration/**/*.test.ts', 'test/testing/**/*.test.ts'],
        },
      },
      // The built binary as a child process: `svc serve` and the client commands.
      {
        test: { ...shared, name: 'e2e', include: ['test/e2e/**/*.test.ts', 'test/cli/**/*.test.ts', 'test/*.test.ts'] },
      },
      { test: { ...shared, name: 'browser', include: ['test/browser/**/*.test.ts'] } },
      // The mail tests again with every library seam on its stock path (src/server/{inbound,outbound}/seams/,
      // ARCHITECTURE.md): what the service does with a library upgraded past the version its fast path is written for.
      {
        test: {
          ...shared,
          name: 'stock',
          env: { SVC_STOCK_SEAMS: '1' },
          include: [
            'src/server/{inbound,outbound,seams}/**/*.test.ts',
            'test/integration/{sink,sink-smtp,dkim-sink,submission,emails-delivery,emails-big}.test.ts',
          ],
        },
      },
    ],
  },
});
