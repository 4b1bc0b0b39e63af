// The config test/e2e/playwright-fixture.test.ts runs: svc-mail/playwright (from src/) with no base URL, so each
// worker starts a sandbox of its own; one retry, so a retry's address can be seen to differ.
import { defineConfig } from '@playwright/test';
import type { SvcTestFixtures, SvcWorkerFixtures } from '../../src/testing/playwright.js';

export default defineConfig<SvcTestFixtures, SvcWorkerFixtures>({
  testDir: '.',
  testMatch: '*.spec.ts',
  fullyParallel: true,
  retries: 1,
  timeout: 60_000,
  use: {
    svc: { sandbox: { checkPrivateLinks: true } },
    launchOptions: {
      executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update'],
    },
  },
});
