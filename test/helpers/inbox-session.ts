// The inbox page's sign-in, as a browser makes it, for tests that call the sandbox as the page does.
/**
 * Signs in to a server's inbox page as a browser does from the printed address, and returns the page's session: the
 * bearer the sign-in hands over in the redirect's fragment (docs/local-server.md#who-can-open-the-inbox).
 */
export async function inboxSession(origin: string, adminToken: string): Promise<string> {
  const res = await fetch(`${origin}/?token=${adminToken}`, { redirect: 'manual' });
  const to = res.headers.get('location') ?? '';
  const session = /^\/#session=(ses_[\w.-]+)$/.exec(to)?.[1];
  if (res.status !== 303 || !session) throw new Error(`no inbox session: ${res.status} to ${JSON.stringify(to)}`);
  return session;
}
