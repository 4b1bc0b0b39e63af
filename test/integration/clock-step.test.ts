// A wall clock stepped back (an NTP correction, a restored VM) stops nothing: the sending bucket and the throttles
// measure intervals on a reading that does not go back, and caught mail's ids keep the order it arrived in
// (docs/api.md#rate-limits, docs/api.md: ids).
import nodemailer from 'nodemailer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HOUR, SECOND } from '../../src/lib/clock.js';
import { steppableTime } from '../helpers/clock.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { expectProblem, mail, send } from './emails-helpers.js';

describe('a wall clock stepped back', () => {
  const time = steppableTime();
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({ clock: 'real', time: time.sources, sendRate: 1 });
  });
  afterAll(() => s.close());

  it('leaves the sending bucket as it was: a send waits a second for its token, not an hour for the clock', async () => {
    for (let i = 0; i < 2; i++) expect((await send(s, mail())).status).toBe(202);
    const limited = await send(s, mail());
    expectProblem(limited, 429, 'rate_limited');
    expect(limited.headers.get('retry-after')).toBe('1');

    time.step(-HOUR);
    const after = await send(s, mail());
    expectProblem(after, 429, 'rate_limited');
    expect(after.headers.get('retry-after')).toBe('1');
    time.pass(SECOND);
    expect((await send(s, mail())).status).toBe(202);
  });

  it('leaves the login throttle as it was: a throttled account waits out its 15 minutes, no more', async () => {
    const login = (password: string) => s.call('POST', '/v1/auth/login', { body: { email: s.seed!.email, password } });
    for (let i = 0; i < 10; i++) expectProblem(await login('not the password'), 401, 'invalid_credentials');
    const throttled = await login(s.seed!.password);
    expectProblem(throttled, 429, 'rate_limited');
    expect(throttled.headers.get('retry-after')).toBe('900');
    time.step(-HOUR);
    const after = await login(s.seed!.password);
    expectProblem(after, 429, 'rate_limited');
    expect(after.headers.get('retry-after')).toBe('900');
    time.pass(900 * SECOND);
    expect((await login(s.seed!.password)).status).toBe(200);
  });

  it('keeps caught mail in the order it arrived: a later message has a later id, though an earlier time', async () => {
    const smtp = nodemailer.createTransport({ host: '127.0.0.1', port: s.smtpPort, secure: false, ignoreTLS: true });
    const to = 'stepped@example.org';
    await smtp.sendMail({ from: 'a@example.org', to, subject: 'first', text: 'one' });
    time.step(-HOUR);
    await smtp.sendMail({ from: 'a@example.org', to, subject: 'second', text: 'two' });
    smtp.close();
    const listed = (await s.admin('GET', `/sandbox/messages?to=${to}`)).body.data as {
      id: string;
      subject: string;
      received_at: string;
    }[];
    expect(listed.map((m) => m.subject)).toEqual(['second', 'first']);
    expect(Date.parse(listed[0]!.received_at)).toBeLessThan(Date.parse(listed[1]!.received_at));
    expect(listed[0]!.id > listed[1]!.id).toBe(true);
  });
});
