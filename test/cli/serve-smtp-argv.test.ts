// argv → flags for the SMTP sink's limits of `svc serve`, through the real commander tree; a size or count that cannot
// be one is a usage error (exit 2) before anything starts.
import { describe, expect, it } from 'vitest';
import { buildProgram } from '../../src/cli/program.js';
import { parse } from './helpers.js';

async function serveFlags(...argv: string[]) {
  const program = await buildProgram({ runner: async () => {} });
  let flags: { maxMessageSize?: number; smtpMaxConnections?: number; smtpStarttls?: boolean } = {};
  program.commands.find((c) => c.name() === 'serve')!.action((f: typeof flags) => void (flags = f));
  await program.parseAsync(['node', 'svc', 'serve', ...argv]);
  return flags;
}

describe('svc serve --max-message-size and --smtp-max-connections', () => {
  it.each([
    ['50MB', 50_000_000],
    ['10MiB', 10_485_760],
    ['500KB', 500_000],
    ['1048576', 1_048_576],
  ])('--max-message-size %s is %d bytes', async (size, bytes) => {
    expect((await serveFlags('--max-message-size', size)).maxMessageSize).toBe(bytes);
  });

  it('--smtp-max-connections takes a count; neither is set unless given (the sink has its defaults)', async () => {
    expect(await serveFlags('--smtp-max-connections', '7')).toMatchObject({ smtpMaxConnections: 7 });
    const none = await serveFlags();
    expect(none.maxMessageSize).toBeUndefined();
    expect(none.smtpMaxConnections).toBeUndefined();
  });

  it("--smtp-starttls turns the sink's STARTTLS on; off unless given, and --no-smtp-starttls names that default", async () => {
    // Not given: the server's default, off.
    expect((await serveFlags()).smtpStarttls).toBeUndefined();
    expect((await serveFlags('--smtp-starttls')).smtpStarttls).toBe(true);
    expect((await serveFlags('--no-smtp-starttls')).smtpStarttls).toBe(false);
  });

  it.each([
    [['--max-message-size', 'lots'], /--max-message-size takes a size such as 50MB, 10MiB, 500KB or a number of bytes/],
    [['--max-message-size', '50 furlongs'], /--max-message-size takes a size/],
    [['--max-message-size', '0'], /--max-message-size must be from 1 byte to 500MiB/],
    [['--max-message-size', '2GB'], /--max-message-size must be from 1 byte to 500MiB/],
    [['--smtp-max-connections', '0'], /--smtp-max-connections must be a whole number from 1/],
    [['--smtp-max-connections', 'many'], /--smtp-max-connections must be a whole number/],
  ])('svc serve %j is a usage error (exit 2)', async (argv, message) => {
    const r = await parse('serve', ...argv);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
  });
});
