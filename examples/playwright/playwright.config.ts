// The example's Playwright config: `webServer` starts the sandbox (`svc serve`, seeded from seed.yaml so that the app
// can name its test key before it starts) and the app, and the tests find the sandbox by its URL (svc-mail/playwright
// reads its admin token from the registry of running servers, as `svc inbox` does). In your own project, `svc` is
// `npx svc`; here it is the repository's bin/svc.js.
import { defineConfig } from '@playwright/test';
import type { SvcTestFixtures, SvcWorkerFixtures } from 'svc-mail/playwright';

const svcPort = Number(process.env.SVC_PORT ?? 4310);
const appPort = Number(process.env.APP_PORT ?? 3310);
const svcUrl = `http://127.0.0.1:${svcPort}/v1`;

export default defineConfig<SvcTestFixtures, SvcWorkerFixtures>({
  testDir: '.',
  testMatch: '*.spec.ts',
  fullyParallel: true,
  workers: 4,
  forbidOnly: !!process.env.CI,
  retries: process.env.CI ? 1 : 0,
  timeout: 60_000,
  use: {
    baseURL: `http://127.0.0.1:${appPort}`,
    svc: { baseUrl: svcUrl },
    svcInbox: { prefix: 'signup', domain: 'example.org' },
    launchOptions: {
      // Debian's Chromium (apt-get install chromium), or the one CHROMIUM_PATH names.
      executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update'],
    },
  },
  webServer: [
    {
      command:
        `node ../../bin/svc.js serve --memory --seed seed.yaml --port ${svcPort} --smtp-port 0 ` +
        '--submission-port off --submissions-port off --pop3-port off --imap-port off --quiet',
      url: `http://127.0.0.1:${svcPort}/readyz`,
      timeout: 120_000,
      reuseExistingServer: !process.env.CI,
    },
    {
      command: 'node app.mjs',
      url: `http://127.0.0.1:${appPort}/`,
      env: { PORT: String(appPort), SVC_BASE_URL: svcUrl, SVC_API_KEY: 'svc_test_DJNYNRfd7cGrRX8iI2RWRZ3dV68jzPVc' },
      reuseExistingServer: !process.env.CI,
    },
  ],
});
