import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { withFileLock } from './lock.js';

const dir = mkdtempSync(join(tmpdir(), 'svc-lock-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('withFileLock', () => {
  it('lets one holder at a time read-modify-write (without it, concurrent increments are lost)', async () => {
    const counter = join(dir, 'counter');
    writeFileSync(counter, '0');
    const lock = join(dir, 'counter.lock');
    const increment = () =>
      withFileLock(lock, async () => {
        const n = Number(await readFile(counter, 'utf8'));
        await new Promise((r) => setImmediate(r));
        await writeFile(counter, String(n + 1));
      });
    await Promise.all(Array.from({ length: 8 }, increment));
    expect(readFileSync(counter, 'utf8')).toBe('8');
    expect(existsSync(lock)).toBe(false);
  });

  it('breaks a lock left by a process that is gone', async () => {
    const lock = join(dir, 'dead.lock');
    writeFileSync(lock, '999999999');
    expect(await withFileLock(lock, async () => 'ran')).toBe('ran');
  });

  it('gives up on a lock a live process keeps, naming the file to delete', async () => {
    const lock = join(dir, 'held.lock');
    writeFileSync(lock, String(process.pid));
    await expect(withFileLock(lock, async () => 'ran', 200)).rejects.toThrow(`another svc process has held ${lock}`);
    expect(readFileSync(lock, 'utf8')).toBe(String(process.pid));
  });

  it('releases the lock when the work fails', async () => {
    const lock = join(dir, 'fail.lock');
    await expect(withFileLock(lock, async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(existsSync(lock)).toBe(false);
  });
});
