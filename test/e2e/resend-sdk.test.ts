// Resend's Node SDK against the real binary, pointed at it with RESEND_BASE_URL as its documentation says: it sends,
// and it reads svc's refusals (Problems with `name`, `message` and `statusCode`) as its `error`.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, killAll, serve, stop, type Served } from '../helpers/binary.js';

describe("Resend's Node SDK", () => {
  let s: Served;
  let Resend: typeof import('resend').Resend;
  const before = process.env.RESEND_BASE_URL;
  const after: (() => void)[] = [];

  beforeAll(async () => {
    ensureBuilt();
    s = await serve(['--memory', '--clock', 'manual']);
    // The SDK joins its base URL and the path (`/emails`): the base is the API's, with /v1.
    process.env.RESEND_BASE_URL = s.ready.api;
    ({ Resend } = await import('resend'));
  }, 120_000);
  afterAll(async () => {
    if (before === undefined) delete process.env.RESEND_BASE_URL;
    else process.env.RESEND_BASE_URL = before;
    if (s) await stop(s);
    killAll();
    for (const f of after) f();
  });

  it('sends, a remote attachment given as `path` included', async () => {
    // The file on a server of its own (svc's own ports are never fetched from: docs/api.md#attachment-urls).
    const files: Server = createServer((_, res) => res.end('The terms.'));
    await new Promise<void>((resolve) => files.listen(0, '127.0.0.1', resolve));
    const fileUrl = `http://127.0.0.1:${(files.address() as AddressInfo).port}/terms.txt`;
    after.push(() => files.close());
    const resend = new Resend(s.ready.seed!.api_key_test!);
    const { data, error } = await resend.emails.send({
      from: 'Shop <orders@example.test>',
      to: ['ada@example.org'],
      subject: 'Sent with the Resend SDK',
      html: '<p>Hello</p>',
      tags: [{ name: 'flow', value: 'welcome' }],
      attachments: [{ filename: 'terms.txt', path: fileUrl }],
    });
    expect(error).toBeNull();
    expect(data!.id).toMatch(/^msg_\w+$/);
    const got = await resend.emails.get(data!.id);
    expect(got.data).toMatchObject({ id: data!.id, subject: 'Sent with the Resend SDK' });
  });

  it('reads a 422 as its error: name validation_error, the message, statusCode 422', async () => {
    const resend = new Resend(s.ready.seed!.api_key_test!);
    const { data, error } = await resend.emails.send({
      from: 'hi@unverified.example',
      to: 'ada@example.org',
      subject: 'x',
      text: 'x',
    });
    expect(data).toBeNull();
    expect(error).toMatchObject({
      name: 'validation_error',
      statusCode: 422,
      message: expect.stringMatching(/^unverified\.example is not a verified domain of this workspace/),
    });
  });

  it('reads a 401 as its error: name invalid_api_key, statusCode 401', async () => {
    const resend = new Resend('svc_test_not_a_key_of_this_server');
    const { data, error } = await resend.emails.send({
      from: 'a@example.test',
      to: 'b@example.org',
      subject: 'x',
      text: 'x',
    });
    expect(data).toBeNull();
    expect(error).toMatchObject({
      name: 'invalid_api_key',
      statusCode: 401,
      message: expect.stringMatching(/^The API key is unknown, revoked or expired/),
    });
  });
});
