import { defineConfig } from 'vitest/config';

// Four projects, so a change can be checked by the part it touches: `npm run test:fast` runs `unit` and
// `integration` (everything in this process: the app, the sink over a socket, the stores), `npm test` runs all.
const shared = { testTimeout: 20_000, hookTimeout: 30_000 };

export default defineConfig({
  test: {
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
    ],
  },
});
