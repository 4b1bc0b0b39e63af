// MailDev, the Node mail catcher the SMTP benches measure svc against: installed once into the system's temporary
// folder (the npm registry is all it needs), started on the ports given.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const MAILDEV_VERSION = '3.0.0';
export const MAILDEV_DIR = join(tmpdir(), `svc-bench-maildev-${MAILDEV_VERSION}`);
const BIN = join(MAILDEV_DIR, 'node_modules', 'maildev', 'dist', 'bin', 'maildev.js');

/** MailDev from a directory of the system's temporary folder, installed there on the first run. */
export function haveMaildev(): boolean {
  if (existsSync(BIN)) return true;
  console.log(`  installing maildev@${MAILDEV_VERSION} into ${MAILDEV_DIR} (once)…`);
  const r = spawnSync(
    'npm',
    ['install', '--prefix', MAILDEV_DIR, `maildev@${MAILDEV_VERSION}`, '--no-audit', '--no-fund', '--loglevel=error'],
    { stdio: ['ignore', 'ignore', 'inherit'] },
  );
  return r.status === 0 && existsSync(BIN);
}

/** Starts MailDev with its SMTP server and its web API on these ports of 127.0.0.1 (not waiting for them). */
export async function startMaildev(
  smtpPort: number,
  webPort: number,
): Promise<{ proc: ChildProcess; smtpPort: number; webPort: number }> {
  const args = [
    '--smtp',
    String(smtpPort),
    '--ip',
    '127.0.0.1',
    '--web',
    String(webPort),
    '--web-ip',
    '127.0.0.1',
    '--silent',
  ];
  const proc = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'ignore', 'inherit'] });
  return { proc, smtpPort, webPort };
}
