// The choice every seam makes: the fast path only for the exact version pinned with every private part there, the
// stock path otherwise or when SVC_STOCK_SEAMS asks for it; said once, at debug level.
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import type { LogFields, Logger } from '../../lib/log.js';
import { choosePath, installedVersion, stockForced, tellPath } from './choose.js';

const pins = { somelib: '1.2.3', otherlib: '4.5.6' };
const versions = { somelib: '1.2.3', otherlib: '4.5.6' };
const everything = () => null;

describe('choosePath', () => {
  it('is the fast path for the pinned versions with every private part there', () => {
    expect(choosePath({ pins, versions, probe: everything, env: {} })).toEqual({
      path: 'fast',
      why: 'somelib 1.2.3, otherlib 4.5.6, as pinned',
    });
  });

  it('is the stock path for any other version, a newer patch release too, or one it cannot read', () => {
    for (const v of ['1.2.4', '1.2.2', '2.0.0', '1.2.3-beta.1']) {
      expect(choosePath({ pins, versions: { ...versions, somelib: v }, probe: everything, env: {} })).toEqual({
        path: 'stock',
        why: `somelib ${v} is installed; the fast path is written for 1.2.3`,
      });
    }
    expect(choosePath({ pins, versions: { ...versions, otherlib: null }, probe: everything, env: {} })).toEqual({
      path: 'stock',
      why: 'otherlib (version unknown) is installed; the fast path is written for 4.5.6',
    });
    expect(choosePath({ pins, versions: { somelib: '1.2.3' }, probe: everything, env: {} }).path).toBe('stock');
  });

  it('is the stock path when the probe finds a private part missing, or throws', () => {
    expect(choosePath({ pins, versions, probe: () => 'Thing.prototype._private', env: {} })).toEqual({
      path: 'stock',
      why: 'somelib 1.2.3, otherlib 4.5.6 lacks Thing.prototype._private',
    });
    const thrown = choosePath({
      pins,
      versions,
      probe: () => {
        throw new TypeError('x is not a constructor');
      },
      env: {},
    });
    expect(thrown).toEqual({ path: 'stock', why: expect.stringContaining('x is not a constructor') });
  });

  it('is the stock path when SVC_STOCK_SEAMS is set, whatever is installed, without probing', () => {
    let probed = false;
    const probe = () => {
      probed = true;
      return null;
    };
    expect(choosePath({ pins, versions, probe, env: { SVC_STOCK_SEAMS: '1' } })).toEqual({
      path: 'stock',
      why: 'SVC_STOCK_SEAMS is set',
    });
    expect(probed).toBe(false);
  });
});

describe('stockForced', () => {
  it('is set by any value but an empty one, 0 or false', () => {
    for (const value of ['1', 'true', 'yes', 'TRUE']) expect(stockForced({ SVC_STOCK_SEAMS: value })).toBe(true);
    for (const value of [undefined, '', '0', 'false', 'False'])
      expect(stockForced({ SVC_STOCK_SEAMS: value })).toBe(false);
  });

  it('names libraries: only their seams take the stock path; a name it does not know means every seam', () => {
    const env = { SVC_STOCK_SEAMS: 'mailparser, smtp-server' };
    expect(stockForced(env, ['mailparser'])).toBe(true);
    expect(stockForced(env, ['smtp-server'])).toBe(true);
    expect(stockForced(env, ['nodemailer'])).toBe(false);
    expect(stockForced({ SVC_STOCK_SEAMS: 'mailparserr' }, ['nodemailer'])).toBe(true);
    const choice = choosePath({
      pins: { nodemailer: '1.0.0' },
      versions: { nodemailer: '1.0.0' },
      probe: () => null,
      env,
    });
    expect(choice.path).toBe('fast');
  });
});

describe('installedVersion', () => {
  it('reads the version of a package as installed, and is null for one that is not', () => {
    const require = createRequire(import.meta.url);
    expect(installedVersion('smtp-server')).toBe((require('smtp-server/package.json') as { version: string }).version);
    expect(installedVersion('no-such-package-here')).toBeNull();
  });
});

describe('tellPath', () => {
  it('says which path a seam took once, at debug level, with why', () => {
    const lines: [string, string, LogFields | undefined][] = [];
    const at =
      (level: string) =>
      (msg: string, fields?: LogFields): void =>
        void lines.push([level, msg, fields]);
    const log: Logger = { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
    const seam = `a seam of this test ${Math.random()}`;
    tellPath(log, seam, { path: 'stock', why: 'SVC_STOCK_SEAMS is set' });
    tellPath(log, seam, { path: 'stock', why: 'SVC_STOCK_SEAMS is set' });
    expect(lines).toEqual([
      ['debug', `library seam: ${seam} takes its stock path`, { seam, path: 'stock', why: 'SVC_STOCK_SEAMS is set' }],
    ]);
  });
});
