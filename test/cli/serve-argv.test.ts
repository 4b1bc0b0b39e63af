// argv → flags for what `svc serve` gained (--reset, --yes, --max-messages, --max-age), through the real commander
// tree, and the usage errors (exit 2) that stop it before anything is touched.
import { describe, expect, it } from 'vitest';
import { parse } from './helpers.js';

describe('svc serve argv', () => {
  it('takes --reset and --yes', async () => {
    // Run as every command is: its runner gets the flags.
    const r = await parse('serve', '--data-dir', '/tmp/x', '--reset', '--yes');
    expect(r.command).toBe('serve');
    expect(r.opts).toMatchObject({ reset: true, yes: true, dataDir: '/tmp/x' });
    const tree = ((await parse('completion', 'bash')).opts as { tree: { path: string; options: { flag: string }[] }[] })
      .tree;
    expect(tree.find((t) => t.path === 'serve')!.options.map((o) => o.flag)).toEqual(
      expect.arrayContaining(['--reset', '--yes']),
    );
  });

  async function serveFlags(...argv: string[]) {
    return (await parse('serve', ...argv)).opts as { maxMessages?: number | 'off'; maxAge?: number | 'off' };
  }

  it('keeps the newest 10,000 caught messages and no age limit unless told; --max-age takes days, hours, minutes or seconds', async () => {
    // Unset: the server's own default applies (10,000; the ready line says so).
    expect((await serveFlags()).maxMessages).toBeUndefined();
    expect((await serveFlags()).maxAge).toBeUndefined();
    expect(await serveFlags('--max-messages', '500', '--max-age', '7d')).toMatchObject({
      maxMessages: 500,
      maxAge: 7 * 86_400_000,
    });
    expect(await serveFlags('--max-messages', 'off', '--max-age', 'off')).toMatchObject({
      maxMessages: 'off',
      maxAge: 'off',
    });
    for (const [given, ms] of [
      ['12h', 12 * 3_600_000],
      ['30m', 1_800_000],
      ['45s', 45_000],
      ['3600', 3_600_000],
    ] as const) {
      expect((await serveFlags('--max-age', given)).maxAge).toBe(ms);
    }
  });

  it('hands --spamd and --check-private-links to the server as they are (the server checks HOST:PORT)', async () => {
    expect((await parse('serve', '--spamd', '127.0.0.1:783', '--check-private-links')).opts).toMatchObject({
      spamd: '127.0.0.1:783',
      checkPrivateLinks: true,
    });
    const none = (await parse('serve')).opts as { spamd?: string; checkPrivateLinks?: boolean };
    expect(none.spamd).toBeUndefined();
    expect(none.checkPrivateLinks).toBeUndefined();
  });

  it('hands --allow-private-attachment-urls to the server; without it, nothing (private ranges refused)', async () => {
    expect((await parse('serve', '--allow-private-attachment-urls')).opts).toMatchObject({
      allowPrivateAttachmentUrls: true,
    });
    expect((await parse('serve')).opts).not.toHaveProperty('allowPrivateAttachmentUrls');
  });

  it.each([
    [['serve', '--max-messages', '0'], /--max-messages <n\|off>.*at least 1 .*or off to keep every one/],
    [['serve', '--max-messages', '-5'], /--max-messages/],
    [['serve', '--max-messages', '1.5'], /--max-messages/],
    [['serve', '--max-messages', 'lots'], /--max-messages/],
    [
      ['serve', '--max-age', '7w'],
      /--max-age <duration\|off>.*such as 7d, 12h, 30m, 90s or a number of seconds, or off/,
    ],
    [['serve', '--max-age', '0'], /--max-age/],
    [['serve', '--max-age', '-1h'], /--max-age/],
    [['serve', '--max-age', ''], /--max-age/],
    [['serve', '--yes'], /--yes goes with --reset/],
    [
      ['serve', '--reset', '--yes', '--memory'],
      /--reset empties a data directory; with --memory nothing is kept to reset/,
    ],
  ])('svc %j is a usage error (exit 2)', async (argv, message) => {
    const r = await parse(...argv);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
  });
});
