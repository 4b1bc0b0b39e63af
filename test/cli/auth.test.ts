// signup, login, logout, whoami, verify-email and sessions revoke-all: their run functions with a captured IO against
// the real server, and the session they keep (file store, refreshed by itself, rotated tokens stored at once).
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MeResponse, RevokeAllResponse, Session, VerifyEmailResponse } from '../../src/contract/auth.js';
import { loginRun } from '../../src/cli/commands/auth/login.js';
import { logoutRun } from '../../src/cli/commands/auth/logout.js';
import { signupRun } from '../../src/cli/commands/auth/signup.js';
import { verifyEmailRun } from '../../src/cli/commands/auth/verify-email.js';
import { whoamiRun } from '../../src/cli/commands/auth/whoami.js';
import { revokeAllRun } from '../../src/cli/commands/sessions/revoke-all.js';
import type { Prompts } from '../../src/cli/io.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { newTenant } from '../helpers/tenants.js';
import { cli, tempDirs } from './helpers.js';

/** What `--json` prints for a session: the Session without its two tokens. */
const PrintedSession = Session.omit({ access_token: true, refresh_token: true });

function storedSecrets(configDir: string): Record<string, string> {
  const file = join(configDir, 'secrets', 'credentials.json');
  return JSON.parse(readFileSync(file, 'utf8'));
}
const storedSession = (configDir: string, profile = 'default') =>
  JSON.parse(storedSecrets(configDir)[`${profile}/session`] ?? 'null');

describe('signing in and out', () => {
  let s: TestServer;
  const dirs = tempDirs();
  beforeAll(async () => {
    s = await startTestServer();
  });
  afterAll(async () => {
    await s.close();
    dirs.cleanup();
  });

  const login = async (configDir: string, email = s.seed!.email, password = s.seed!.password, extra: object = {}) => {
    const c = await cli(s, { configDir, stdin: password });
    return { c, code: await c.run(loginRun, { email, passwordStdin: true, ...extra }, 'svc login') };
  };

  it('signs up with an invite from a script, keeps the session, and confirms the email with the token the sink caught', async () => {
    const configDir = dirs.make();
    const invite = await s.admin('POST', '/sandbox/invites', {});
    const email = `new-${Date.now()}@example.org`;
    const c = await cli(s, { configDir, stdin: 'plum-quartz-harbor-1987\n', globals: { json: true } });
    expect(
      await c.run(signupRun, { email, workspace: 'Acme Books', inviteCode: invite.body.code, passwordStdin: true }),
    ).toBe(0);
    const printed = JSON.parse(c.stdout());
    expect(PrintedSession.strict().safeParse(printed).success, c.stdout()).toBe(true);
    expect(printed.workspace).toMatchObject({ name: 'Acme Books', slug: 'acme-books', role: 'owner' });
    expect(c.stdout() + c.stderr()).not.toMatch(/rt_|eyJ/);
    expect(storedSession(configDir).refresh_token).toMatch(/^rt_/);

    const who = await cli(s, { configDir, globals: { json: true } });
    expect(await who.run(whoamiRun, {})).toBe(0);
    expect(MeResponse.parse(JSON.parse(who.stdout())).user).toMatchObject({ email, email_verified: false });

    await s.settle();
    const caught = await s.admin('GET', `/sandbox/messages?to=${encodeURIComponent(email)}`);
    const message = await s.admin('GET', `/sandbox/messages/${caught.body.data[0].id}`);
    const token = decodeURIComponent(/token=([^\s&]+)/.exec(message.body.text)![1]!);
    const verify = await cli(s, { configDir, globals: { json: true } });
    expect(await verify.run(verifyEmailRun, { token })).toBe(0);
    expect(VerifyEmailResponse.parse(JSON.parse(verify.stdout()))).toMatchObject({ verified: true, email });

    const resend = await cli(s, { configDir });
    expect(await resend.run(verifyEmailRun, { resend: true })).toBe(0);
    expect(resend.stderr()).toMatch(/\S/);
    expect(resend.stdout()).toBe('');
  });

  it('refuses signup without an invite, pointing at --invite-code', async () => {
    const c = await cli(s, { configDir: dirs.make(), stdin: 'plum-quartz-harbor-1987' });
    expect(await c.run(signupRun, { email: 'x@example.org', workspace: 'X', passwordStdin: true }, 'svc signup')).toBe(
      1,
    );
    expect(c.stderr()).toMatch(
      /^error: svc signup: Invite required .*\[invite_required, req_\w+\]; hint: signup needs an invite code \(--invite-code\)/,
    );
  });

  it('logs in from a script with --email and --password-stdin; without a terminal it never prompts, it names the flag', async () => {
    const configDir = dirs.make();
    const noEmail = await cli(s, { configDir });
    expect(await noEmail.run(loginRun, {}, 'svc login')).toBe(2);
    expect(noEmail.stderr()).toContain('--email is required when svc is not run on a terminal');
    const noPassword = await cli(s, { configDir });
    expect(await noPassword.run(loginRun, { email: s.seed!.email }, 'svc login')).toBe(2);
    expect(noPassword.stderr()).toContain('--password-stdin is required');

    const wrong = await login(configDir, s.seed!.email, 'not-the-password');
    expect(wrong.code).toBe(4);
    expect(wrong.c.stderr()).toMatch(/^error: svc login: Invalid email or password .*\[invalid_credentials, req_\w+\]/);

    const { c, code } = await login(configDir);
    expect(code).toBe(0);
    expect(c.stdout()).toBe('');
    expect(c.stderr()).toContain(`Logged in to ${s.api} as ${s.seed!.email}, workspace Sandbox (sandbox, owner)`);
    const file = join(configDir, 'secrets', 'credentials.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(storedSession(configDir)).toMatchObject({
      refresh_token: expect.stringMatching(/^rt_/),
      access_token: expect.any(String),
    });
    // The profile remembers who and where, never a token.
    const config = readFileSync(join(configDir, 'config.json'), 'utf8');
    expect(JSON.parse(config).profiles.default).toMatchObject({
      base_url: s.api,
      session: { user: { email: s.seed!.email }, workspace: { slug: 'sandbox' } },
    });
    expect(config).not.toMatch(/rt_|eyJ/);
  });

  it('asks which workspace on a terminal, takes --workspace in scripts, and refuses to guess without one', async () => {
    const t = await newTenant(s, 'multi');
    const second = await s.admin('POST', '/sandbox/workspaces', {
      email: t.email,
      name: 'Side Project',
      role: 'admin',
    });
    expect(second.status).toBe(201);

    const guessDir = dirs.make();
    const guess = await login(guessDir, t.email, t.password);
    expect(guess.code).toBe(2);
    expect(guess.c.stderr()).toMatch(
      /this account belongs to 2 workspaces; choose one with --workspace; hint: one of: /,
    );
    expect(guess.c.stderr()).toContain('multi-workspace (multi workspace, owner)');
    expect(guess.c.stderr()).toContain('side-project (Side Project, admin)');
    expect(() => statSync(join(guessDir, 'secrets', 'credentials.json'))).toThrow();

    for (const wanted of ['side-project', 'Side Project', second.body.id]) {
      const configDir = dirs.make();
      expect((await login(configDir, t.email, t.password, { workspace: wanted })).code, wanted).toBe(0);
      const who = await cli(s, { configDir, globals: { json: true } });
      expect(await who.run(whoamiRun, {})).toBe(0);
      expect(JSON.parse(who.stdout()).workspace).toMatchObject({ id: second.body.id, role: 'admin' });
    }

    const unknown = await login(dirs.make(), t.email, t.password, { workspace: 'nope' });
    expect(unknown.code).toBe(2);
    expect(unknown.c.stderr()).toContain('this account has no workspace "nope"');

    const asked: string[] = [];
    const prompts: Prompts = {
      input: async () => t.email,
      password: async () => t.password,
      select: async (message, choices) => {
        asked.push(message, ...choices.map((c) => c.name));
        return choices.find((c) => c.name.startsWith('Side Project'))!.value;
      },
    };
    const configDir = dirs.make();
    const tty = await cli(s, { configDir, tty: true, prompts, env: { NO_COLOR: '1' } });
    expect(await tty.run(loginRun, {})).toBe(0);
    expect(asked[0]).toBe('Workspace');
    expect(asked.slice(1).sort()).toEqual(['Side Project (side-project)', 'multi workspace (multi-workspace)']);
    expect(tty.stderr()).toContain('workspace Side Project (side-project, admin)');
  });

  it('shows who is signed in: aligned on a terminal, tab-separated when piped, the API body with --json', async () => {
    const configDir = dirs.make();
    await login(configDir);
    const tty = await cli(s, { configDir, tty: true, env: { NO_COLOR: '1' } });
    expect(await tty.run(whoamiRun, {})).toBe(0);
    expect(tty.stdout()).toMatch(new RegExp(`^user +${s.seed!.email.replace('.', '\\.')}$`, 'm'));
    expect(tty.stdout()).toMatch(/^workspace +Sandbox \(sandbox\)$/m);
    expect(tty.stdout()).not.toContain('\t');

    const piped = await cli(s, { configDir });
    expect(await piped.run(whoamiRun, {})).toBe(0);
    expect(piped.stdout().split('\n')).toContain(`base url\t${s.api}`);
    expect(piped.stdout()).not.toMatch(/\x1b\[/);

    const colour = await cli(s, { configDir, tty: true });
    await colour.run(whoamiRun, {});
    expect(colour.stdout()).toMatch(/\x1b\[1muser/);

    const nobody = await cli(s, { configDir: dirs.make(), env: { SVC_API_KEY: s.seed!.api_key_test } });
    expect(await nobody.run(whoamiRun, {}, 'svc whoami')).toBe(4);
    expect(nobody.stderr()).toBe(
      `error: svc whoami: not logged in to ${s.api} (profile default); hint: svc login; an API key is set (SVC_API_KEY), but keys cannot read the account\n`,
    );
  });

  it('refreshes an expired session by itself, stores the rotated refresh token at once, and asks for a new login once the family is revoked', async () => {
    const configDir = dirs.make();
    await login(configDir);
    const before = storedSession(configDir);
    await s.advance(16 * 60); // the access token has expired (15 minutes)

    const who = await cli(s, { configDir });
    expect(await who.run(whoamiRun, {})).toBe(0);
    const after = storedSession(configDir);
    expect(after.refresh_token).not.toBe(before.refresh_token);
    expect(after.access_token).not.toBe(before.access_token);

    // The rotated-away token comes back (a copy restored from a backup): using it revokes the whole family.
    const c = await cli(s, { configDir });
    await c.ctx.credentials().set('default/session', JSON.stringify(before));
    expect(await c.run(whoamiRun, {}, 'svc whoami')).toBe(4);
    expect(c.stderr()).toBe(
      'error: svc whoami: the session has ended (its refresh token was refused: revoked, expired or already used); hint: sign in again with `svc login`\n',
    );
    expect(storedSecrets(configDir)['default/session']).toBeUndefined();
    // The family is gone: the newer token is refused too.
    const refresh = await s.call('POST', '/v1/auth/refresh', { body: { refresh_token: after.refresh_token } });
    expect(refresh.status).toBe(401);
  });

  it('logs out: the service ends the session and this machine forgets it', async () => {
    const configDir = dirs.make();
    await login(configDir);
    const tokens = storedSession(configDir);
    const out = await cli(s, { configDir });
    expect(await out.run(logoutRun, {})).toBe(0);
    expect(out.stderr()).toContain(`Logged out of ${s.api}`);
    expect(storedSecrets(configDir)['default/session']).toBeUndefined();
    expect((await s.call('POST', '/v1/auth/refresh', { body: { refresh_token: tokens.refresh_token } })).status).toBe(
      401,
    );
    const again = await cli(s, { configDir });
    expect(await again.run(logoutRun, {})).toBe(0);
    expect(again.stderr()).toContain('Not logged in');
  });

  it('revokes every session, this one included, and says until when issued access tokens still work', async () => {
    const configDir = dirs.make();
    await login(configDir);
    const c = await cli(s, { configDir, globals: { json: true } });
    expect(await c.run(revokeAllRun, {})).toBe(0);
    const body = RevokeAllResponse.parse(JSON.parse(c.stdout()));
    expect(body.revoked).toBeGreaterThanOrEqual(1);
    const who = await cli(s, { configDir });
    expect(await who.run(whoamiRun, {}, 'svc whoami')).toBe(4);
    expect(who.stderr()).toContain('not logged in');
  });

  it('keeps profiles apart: a session in one is not used by another', async () => {
    const configDir = dirs.make();
    const c = await cli(s, { configDir, stdin: s.seed!.password, globals: { profile: 'work' } });
    expect(await c.run(loginRun, { email: s.seed!.email, passwordStdin: true })).toBe(0);
    expect(c.stderr()).toContain('[profile work]');
    expect(storedSession(configDir, 'work')).toBeTruthy();
    const other = await cli(s, { configDir });
    expect(await other.run(whoamiRun, {})).toBe(4);
    const same = await cli(s, { configDir, env: { SVC_PROFILE: 'work' } });
    expect(await same.run(whoamiRun, {})).toBe(0);
  });
});
