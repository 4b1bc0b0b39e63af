// The app under test: a sign-up that mails a six-digit code and a confirmation link, through the service's API
// (SVC_BASE_URL, SVC_API_KEY). node:http, no framework; state in memory.
import { randomBytes, randomInt } from 'node:crypto';
import { createServer } from 'node:http';

const { SVC_BASE_URL = 'http://127.0.0.1:4010/v1', SVC_API_KEY, PORT = '3000' } = process.env;
const origin = `http://127.0.0.1:${PORT}`;
const pending = new Map(); // token → { email, code, typed }
const page = (body) => `<!doctype html><meta charset="utf-8"><title>Shop</title><main>${body}</main>`;
const escapeHtml = (s) => s.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);

async function mail(email, code, token) {
  const link = `${origin}/confirm?token=${token}`;
  const res = await fetch(`${SVC_BASE_URL}/emails`, {
    method: 'POST',
    headers: { authorization: `Bearer ${SVC_API_KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      from: 'Shop <hello@shop.test>',
      to: email,
      subject: 'Confirm your email',
      text: `Your code is ${code}.\n\nOr confirm your email: ${link}`,
      html: `<p>Your code is <b>${code}</b>.</p><p><a href="${link}">Confirm your email</a></p>`,
    }),
  });
  if (!res.ok) throw new Error(`sending failed: ${res.status} ${await res.text()}`);
}

createServer(async (req, res) => {
  const url = new URL(req.url, origin);
  const form = new URLSearchParams(req.method === 'POST' ? await new Response(req).text() : '');
  const send = (html, status = 200) => res.writeHead(status, { 'content-type': 'text/html' }).end(page(html));
  if (url.pathname === '/signup' && req.method === 'POST') {
    const email = form.get('email') ?? '';
    const [code, token] = [String(randomInt(0, 1e6)).padStart(6, '0'), randomBytes(16).toString('hex')];
    pending.set(token, { email, code, typed: false });
    await mail(email, code, token);
    return send(`<form method="post" action="/verify"><input type="hidden" name="token" value="${token}">
      <label>Code <input name="code" inputmode="numeric"></label><button>Verify</button></form>`);
  }
  const p = pending.get(url.searchParams.get('token') ?? form.get('token') ?? '');
  if (url.pathname === '/verify' && p && form.get('code') === p.code) {
    p.typed = true;
    return send('<h1>Code accepted</h1><p>Now click the link in the email.</p>');
  }
  if (url.pathname === '/verify') return send('<h1>Wrong code</h1>', 400);
  if (url.pathname === '/confirm' && p?.typed) return send(`<h1>Welcome, ${escapeHtml(p.email)}</h1>`);
  if (url.pathname === '/confirm') return send('<h1>Unknown or unverified link</h1>', 404);
  send(
    '<form method="post" action="/signup"><label>Email <input name="email" type="email"></label><button>Sign up</button></form>',
  );
}).listen(Number(PORT), '127.0.0.1');
