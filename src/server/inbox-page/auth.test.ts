// The inbox page's session and view tokens: what opens what, for how long, and what ends them.
import { describe, expect, it } from 'vitest';
import { SESSION_IDLE_MS, SESSION_MAX_MS, sandboxAuth, STREAM_SCOPE } from './auth.js';

const HOUR = 3600_000;

describe('the sandbox credentials', () => {
  const clock = () => {
    let t = Date.parse('2026-12-01T09:00:00Z');
    return { now: () => t, pass: (ms: number) => (t += ms) };
  };

  it('the admin token and a live session are bearers; nothing else is', () => {
    const auth = sandboxAuth('adm_one');
    const { token } = auth.signIn();
    expect(auth.admits('adm_one')).toBe(true);
    expect(auth.admits(token)).toBe(true);
    for (const other of [null, '', 'adm_two', `${token}x`, token.replace('ses_', 'view_'), `${token}.extra`])
      expect(auth.admits(other), String(other)).toBe(false);
    // Made with another admin token (another server, or this one before --rotate-admin-token): nothing.
    expect(sandboxAuth('adm_two').admits(token)).toBe(false);
    expect(sandboxAuth('adm_two').session(token)).toBeNull();
  });

  it('a session lasts a day from its last renewal, a week at most', () => {
    const c = clock();
    const auth = sandboxAuth('adm_one', c.now);
    const first = auth.signIn();
    expect(first.expiresAt.getTime()).toBe(c.now() + SESSION_IDLE_MS);
    c.pass(SESSION_IDLE_MS - 1000);
    expect(auth.admits(first.token)).toBe(true);
    c.pass(1000);
    expect(auth.admits(first.token)).toBe(false);

    // Renewed every 20 hours, it lives on, but not past a week from the sign-in.
    const started = c.now();
    let token = auth.signIn().token;
    for (let t = 0; t < SESSION_MAX_MS; t += 20 * HOUR) {
      const s = auth.session(token);
      expect(s, `after ${t / HOUR} h`).not.toBeNull();
      token = auth.renew(s!).token;
      expect(auth.session(token)!.expires).toBeLessThanOrEqual(started + SESSION_MAX_MS);
      c.pass(20 * HOUR);
    }
    expect(auth.session(token)).toBeNull();
  });

  it('a view token opens its one scope for as long as its session, and is no bearer', () => {
    const c = clock();
    const auth = sandboxAuth('adm_one', c.now);
    const session = auth.session(auth.signIn().token)!;
    const view = auth.viewToken(session, 'eml_a');
    expect(auth.viewOf(view, 'eml_a')).not.toBeNull();
    expect(auth.viewOf(view, 'eml_b')).toBeNull();
    expect(auth.viewOf(view, STREAM_SCOPE)).toBeNull();
    expect(auth.viewOf(auth.viewToken(session, STREAM_SCOPE), STREAM_SCOPE)).not.toBeNull();
    expect(auth.admits(view)).toBe(false);
    expect(auth.viewOf(undefined, 'eml_a')).toBeNull();
    c.pass(SESSION_IDLE_MS);
    expect(auth.viewOf(view, 'eml_a')).toBeNull();
  });

  it('takes the admin token compared whole, in constant time', () => {
    const auth = sandboxAuth('adm_one');
    expect(auth.isToken('adm_one')).toBe(true);
    for (const other of ['adm_on', 'adm_one ', 'ADM_ONE', '']) expect(auth.isToken(other)).toBe(false);
  });
});
