// The SMTP sink's limits as `svc serve` takes them from its command line (the real binary).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, killAll, serve, stop } from '../helpers/binary.js';
import { smtpTalk } from '../helpers/smtp.js';

describe('svc serve --max-message-size --smtp-max-connections', () => {
  beforeAll(() => ensureBuilt(), 120_000);
  afterAll(() => killAll());

  it('the sink advertises the size it was given and refuses a connection beyond the count', async () => {
    const s = await serve(['--memory', '--no-seed', '--max-message-size', '1KB', '--smtp-max-connections', '1']);
    try {
      const port = Number(new URL(s.ready.smtp).port);
      const first = await smtpTalk(port);
      expect(await first.reply()).toMatch(/^220 /);
      first.write('EHLO client.example.test\r\n');
      expect(await first.reply()).toMatch(/^250[- ]SIZE 1000\r$/m);

      const second = await smtpTalk(port);
      expect(await second.reply()).toMatch(/^421 /);
      await second.closed;
      first.destroy();
    } finally {
      await stop(s);
    }
  });
});
