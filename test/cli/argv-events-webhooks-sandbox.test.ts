// argv → options for `svc events`, `svc webhooks` and `svc sandbox`, through the real commander tree, and the usage
// errors (exit 2) a wrong call gets before anything is sent.
import { describe, expect, it } from 'vitest';
import { parse } from './helpers.js';

/** `svc sandbox chaos set`'s options, none given. */
const CHAOS_NONE = {
  method: undefined,
  path: undefined,
  smtp: undefined,
  status: undefined,
  retryAfter: undefined,
  delay: undefined,
  reset: undefined,
  code: undefined,
  message: undefined,
  times: undefined,
  probability: undefined,
  seed: undefined,
};

describe('svc events | webhooks | sandbox argv', () => {
  it.each([
    [['events', 'list'], 'events list', { types: undefined, limit: undefined, after: undefined }],
    [
      ['trigger', 'email.bounced'],
      'trigger',
      { type: 'email.bounced', domain: undefined, wait: true, timeout: undefined },
    ],
    [
      ['trigger', 'domain.degraded', '--domain', 'example.test', '--no-wait', '--timeout', '1m'],
      'trigger',
      { type: 'domain.degraded', domain: 'example.test', wait: false, timeout: 60_000 },
    ],
    [
      [
        'events',
        'list',
        '--type',
        'email.sent,email.delivered',
        '--type',
        'email.bounced',
        '--limit',
        '100',
        '--after',
        'evt_1',
      ],
      'events list',
      { types: ['email.sent', 'email.delivered', 'email.bounced'], limit: 100, after: 'evt_1' },
    ],
    [
      ['webhooks', 'listen'],
      'webhooks listen',
      { forwardTo: undefined, events: undefined, since: undefined, after: undefined, printSecret: undefined },
    ],
    [
      [
        'webhooks',
        'listen',
        '--forward-to',
        'http://localhost:3000/webhooks',
        '--events',
        'email.sent,email.bounced',
        '--since',
        '2026-09-01T09:00:00Z',
      ],
      'webhooks listen',
      {
        forwardTo: 'http://localhost:3000/webhooks',
        events: ['email.sent', 'email.bounced'],
        since: '2026-09-01T09:00:00Z',
        after: undefined,
        printSecret: undefined,
      },
    ],
    [
      ['webhooks', 'listen', '--after', 'evt_1', '--json'],
      'webhooks listen',
      { forwardTo: undefined, events: undefined, since: undefined, after: 'evt_1', printSecret: undefined },
    ],
    [
      ['--profile', 'staging', 'webhooks', 'listen', '--print-secret'],
      'webhooks listen',
      { forwardTo: undefined, events: undefined, since: undefined, after: undefined, printSecret: true },
    ],
    [
      ['webhooks', 'verify', '--secret', 'whsec_x', '--header', 'Service-Signature: t=1,v1=ab'],
      'webhooks verify',
      { secret: 'whsec_x', signature: 't=1,v1=ab', tolerance: undefined },
    ],
    [
      ['webhooks', 'verify', '--secret', 'whsec_x', '--header', 'service-signature:t=1,v1=ab', '--tolerance', '600'],
      'webhooks verify',
      { secret: 'whsec_x', signature: 't=1,v1=ab', tolerance: 600 },
    ],
    [
      ['webhooks', 'verify', '--secret', 'whsec_x', '--header', 't=1,v1=ab,v1=cd'],
      'webhooks verify',
      { secret: 'whsec_x', signature: 't=1,v1=ab,v1=cd', tolerance: undefined },
    ],
    [['sandbox', 'invites', 'create'], 'sandbox invites create', { maxUses: undefined, expiresAt: undefined }],
    [
      ['sandbox', 'invites', 'create', '--max-uses', '5', '--expires-at', '2030-01-01T00:00:00Z'],
      'sandbox invites create',
      { maxUses: 5, expiresAt: '2030-01-01T00:00:00Z' },
    ],
    [
      ['sandbox', 'workspaces', 'create', '--email', 'a@example.test', '--name', 'Two', '--role', 'member'],
      'sandbox workspaces create',
      { email: 'a@example.test', name: 'Two', role: 'member' },
    ],
    [['sandbox', 'workspaces', 'suspend', 'ws_1'], 'sandbox workspaces suspend', { id: 'ws_1', action: 'suspend' }],
    [['sandbox', 'workspaces', 'activate', 'ws_1'], 'sandbox workspaces activate', { id: 'ws_1', action: 'activate' }],
    [['sandbox', 'workspaces', 'close', 'ws_1'], 'sandbox workspaces close', { id: 'ws_1', action: 'close' }],
    [['sandbox', 'clock'], 'sandbox clock', {}],
    [['sandbox', 'clock', 'advance', '90'], 'sandbox clock advance', { advance: 90_000 }],
    [['sandbox', 'clock', 'advance', '2d'], 'sandbox clock advance', { advance: 2 * 86_400_000 }],
    [
      ['sandbox', 'clock', 'set', '2026-09-01T09:00:00+02:00'],
      'sandbox clock set',
      { to: '2026-09-01T09:00:00+02:00' },
    ],
    [['sandbox', 'dns', 'publish', 'dom_1'], 'sandbox dns publish', { domainId: 'dom_1', propagating: undefined }],
    [
      ['sandbox', 'dns', 'publish', 'dom_1', '--propagating'],
      'sandbox dns publish',
      { domainId: 'dom_1', propagating: true },
    ],
    [
      ['sandbox', 'dns', 'set', '_dmarc.example.test', 'txt', 'v=DMARC1; p=reject;', 'second'],
      'sandbox dns set',
      { host: '_dmarc.example.test', type: 'TXT', values: ['v=DMARC1; p=reject;', 'second'], propagating: undefined },
    ],
    [
      ['sandbox', 'dns', 'remove', 'bounces.example.test', 'MX'],
      'sandbox dns remove',
      { host: 'bounces.example.test', type: 'MX' },
    ],
    [
      [
        'sandbox',
        'webhooks',
        'add',
        '--workspace',
        'ws_1',
        '--url',
        'http://localhost:3000/h',
        '--events',
        'email.sent',
        '--events',
        'email.bounced',
      ],
      'sandbox webhooks add',
      { workspace: 'ws_1', url: 'http://localhost:3000/h', events: ['email.sent', 'email.bounced'] },
    ],
    [['sandbox', 'webhooks', 'list', '--workspace', 'ws_1'], 'sandbox webhooks list', { workspace: 'ws_1' }],
    [['sandbox', 'webhooks', 'list'], 'sandbox webhooks list', { workspace: undefined }],
    [['sandbox', 'webhooks', 'remove', 'whk_1'], 'sandbox webhooks remove', { id: 'whk_1' }],
    [['sandbox', 'webhooks', 'rotate-secret', 'whk_1'], 'sandbox webhooks rotate-secret', { id: 'whk_1' }],
    [['sandbox', 'webhooks', 'enable', 'whk_1'], 'sandbox webhooks enable', { id: 'whk_1' }],
    [['sandbox', 'messages', 'clear'], 'sandbox messages clear', {}],
    [['--admin-token', 'adm_x', 'sandbox', 'clock'], 'sandbox clock', {}],
    [
      ['sandbox', 'chaos', 'set', '--path', '/v1/emails', '--method', 'POST', '--status', '503', '--times', '2'],
      'sandbox chaos set',
      { ...CHAOS_NONE, path: '/v1/emails', method: 'POST', status: 503, times: 2 },
    ],
    [
      ['sandbox', 'chaos', 'set', '--status', '429', '--retry-after', '7', '--probability', '0.5', '--seed', '42'],
      'sandbox chaos set',
      { ...CHAOS_NONE, status: 429, retryAfter: 7, probability: 0.5, seed: 42 },
    ],
    [['sandbox', 'chaos', 'set', '--delay', '250'], 'sandbox chaos set', { ...CHAOS_NONE, delay: 250 }],
    [['sandbox', 'chaos', 'set', '--reset'], 'sandbox chaos set', { ...CHAOS_NONE, reset: true }],
    [
      ['sandbox', 'chaos', 'set', '--smtp', 'rcpt', '--code', '451', '--message', 'Greylisted', '--times', '1'],
      'sandbox chaos set',
      { ...CHAOS_NONE, smtp: 'rcpt', code: 451, message: 'Greylisted', times: 1 },
    ],
    [['sandbox', 'chaos', 'list'], 'sandbox chaos list', {}],
    [['sandbox', 'chaos', 'clear'], 'sandbox chaos clear', {}],
  ])('svc %j', async (argv, command, opts) => {
    const r = await parse(...argv);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.command).toBe(command);
    expect(r.opts).toEqual(opts);
  });

  it.each([
    [['events', 'list', '--limit', '0'], /--limit must be a whole number from 1 to 100/],
    [['events', 'get'], /unknown command 'get'/],
    [
      ['webhooks', 'listen', '--since', '2026-09-01T09:00:00Z', '--after', 'evt_1'],
      /option '--since <time>' cannot be used with option '--after <id>'/,
    ],
    [['webhooks', 'listen', '--since', 'yesterday'], /--since takes an ISO 8601 time/],
    [['webhooks', 'listen', '--forward-to', 'localhost:3000'], /--forward-to takes an http\(s\) URL/],
    [['webhooks', 'listen', '--forward-to', 'ftp://example.com/'], /--forward-to takes an http\(s\) URL/],
    [['webhooks', 'verify', '--header', 't=1,v1=ab'], /required option '--secret <whsec>' not specified/],
    [['webhooks', 'verify', '--secret', 'whsec_x'], /required option '--header <header>' not specified/],
    [
      ['webhooks', 'verify', '--secret', 'whsec_x', '--header', 'Stripe-Signature: t=1,v1=ab'],
      /--header takes the Service-Signature header .*got a Stripe-Signature header/,
    ],
    [['webhooks', 'verify', '--secret', 'whsec_x', '--header', 'Service-Signature:'], /it is empty/],
    [
      ['webhooks', 'verify', '--secret', 'whsec_x', '--header', 't=1,v1=ab', '--tolerance', '5m'],
      /--tolerance must be a whole number/,
    ],
    [['sandbox', 'invites', 'create', '--max-uses', '0'], /--max-uses must be a whole number from 1/],
    [['sandbox', 'invites', 'create', '--expires-at', 'next week'], /--expires-at takes an ISO 8601 time/],
    [
      ['sandbox', 'workspaces', 'create', '--email', 'a@example.test', '--name', 'Two'],
      /required option '--role <role>' not specified/,
    ],
    [
      ['sandbox', 'workspaces', 'create', '--email', 'a@example.test', '--name', 'Two', '--role', 'boss'],
      /option '--role <role>' argument 'boss' is invalid/,
    ],
    [['sandbox', 'workspaces', 'suspend'], /missing required argument 'id'/],
    [['sandbox', 'clock', 'advance'], /missing required argument 'duration'/],
    [['sandbox', 'clock', 'advance', 'soon'], /DURATION takes seconds or a duration such as 30s/],
    [['sandbox', 'clock', 'set', 'tomorrow'], /TIME takes an ISO 8601 time/],
    [['sandbox', 'clock', 'rewind'], /too many arguments|unknown command/],
    [['sandbox', 'dns', 'set', 'h.example.test', 'A', '1.2.3.4'], /TYPE is TXT, CNAME or MX/],
    [['sandbox', 'dns', 'set', 'h.example.test', 'TXT'], /missing required argument 'value'/],
    [['sandbox', 'dns', 'remove', 'h.example.test'], /missing required argument 'type'/],
    [['sandbox', 'webhooks', 'add', '--url', 'http://localhost/h'], /required option '--workspace <id>' not specified/],
    [['sandbox', 'webhooks', 'add', '--workspace', 'ws_1'], /required option '--url <url>' not specified/],
    [['sandbox', 'webhooks', 'remove'], /missing required argument 'id'/],
    [
      ['sandbox', 'chaos', 'set', '--status', '503', '--delay', '5'],
      /'--status <status>' cannot be used with option '--delay <ms>'/,
    ],
    [['sandbox', 'chaos', 'set', '--smtp', 'rcpt', '--status', '503'], /cannot be used with option '--smtp <stage>'/],
    [['sandbox', 'chaos', 'set', '--smtp', 'rcpt', '--path', '/v1/emails'], /cannot be used with option/],
    [['sandbox', 'chaos', 'set', '--smtp', 'helo', '--code', '451'], /argument 'helo' is invalid/],
    [['sandbox', 'chaos', 'set', '--status', '399'], /--status must be a whole number from 400 to 599/],
    [['sandbox', 'chaos', 'set', '--delay', '60001'], /--delay must be a whole number from 0 to 60000/],
    [['sandbox', 'chaos', 'set', '--status', '503', '--times', '0'], /--times must be a whole number from 1/],
    [
      ['sandbox', 'chaos', 'set', '--status', '503', '--probability', 'half'],
      /--probability takes a number from 0 to 1/,
    ],
  ])('svc %j is a usage error (exit 2)', async (argv, message) => {
    const r = await parse(...argv);
    expect(r.code).toBe(2);
    expect(r.command).toBeUndefined();
    expect(r.stderr).toMatch(message);
  });
});
