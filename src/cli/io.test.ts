import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createIO, type Env } from './io.js';

const io = (env: Env, stdoutIsTTY: boolean, stderrIsTTY: boolean) =>
  createIO({
    stdin: new PassThrough(),
    stdout: new PassThrough(),
    stderr: new PassThrough(),
    env,
    stdinIsTTY: false,
    stdoutIsTTY,
    stderrIsTTY,
    columns: 80,
  });

describe('colour', () => {
  it('on each stream that is a terminal, in the basic colours', async () => {
    const both = await io({}, true, true);
    expect(both.out.bold('ID')).toBe('\x1b[1mID\x1b[22m');
    expect(both.err.dim('hint')).toBe('\x1b[2mhint\x1b[22m');
    const codes = [both.out.red, both.out.green, both.out.yellow, both.out.cyan].map((f) => f('x'));
    expect(codes).toEqual(['\x1b[31mx\x1b[39m', '\x1b[32mx\x1b[39m', '\x1b[33mx\x1b[39m', '\x1b[36mx\x1b[39m']);
    // Called on their own, as `(ok ? green : red)(text)` does.
    const { green } = both.err;
    expect(green('ok')).toBe('\x1b[32mok\x1b[39m');
    // Nothing to wrap: no codes.
    expect(both.out.bold('')).toBe('');

    const piped = await io({}, false, true);
    expect(piped.out.bold('ID')).toBe('ID');
    expect(piped.err.bold('ID')).toBe('\x1b[1mID\x1b[22m');
  });

  it('never with NO_COLOR, nor on a pipe however FORCE_COLOR is set', async () => {
    const none = await io({ NO_COLOR: '1' }, true, true);
    expect([none.out.bold('ID'), none.err.red('no')]).toEqual(['ID', 'no']);
    const forced = await io({ FORCE_COLOR: '3' }, false, false);
    expect([forced.out.bold('ID'), forced.err.red('no')]).toEqual(['ID', 'no']);
  });
});

describe('hints', () => {
  const said = async (env: Env, line: string) => {
    const stderr = new PassThrough();
    const io = await createIO({
      stdin: new PassThrough(),
      stdout: new PassThrough(),
      stderr,
      env,
      stdinIsTTY: false,
      stdoutIsTTY: false,
      stderrIsTTY: false,
    });
    io.info(line);
    return String(stderr.read());
  };
  const hint = 'could not reach 127.0.0.1:4010; hint: start a local service with `svc serve`, or see `svc servers`';

  it('name the command as the reader runs it: `npx svc-mail …` under npx, `svc …` on the PATH', async () => {
    expect(await said({}, hint)).toBe(`${hint}\n`);
    expect(await said({ npm_command: 'run-script' }, hint)).toBe(`${hint}\n`);
    expect(await said({ npm_command: 'exec', npm_package_name: 'my-app' }, hint)).toBe(
      'could not reach 127.0.0.1:4010; hint: start a local service with `npx svc-mail serve`, or see `npx svc-mail servers`\n',
    );
    // In the package's own checkout npx knows it by its command.
    expect(await said({ npm_command: 'exec', npm_package_name: 'svc-mail' }, 'run `svc login`')).toBe(
      'run `npx svc login`\n',
    );
    // Words that only start like the command are left alone.
    expect(await said({ npm_command: 'exec' }, 'see `svc-mail/testing` and `svc_test_…`')).toBe(
      'see `svc-mail/testing` and `svc_test_…`\n',
    );
  });
});
