import { describe, expect, it } from 'vitest';
import { chaosCode, createChaos, unmatchable } from './chaos.js';

describe('chaos rules', () => {
  it('answer the next N matching requests, then retire; the index is the rule’s place in the list', () => {
    const c = createChaos();
    c.set([
      { match: { method: 'GET', path: '/v1/emails/{id}' }, action: { delay_ms: 50 } },
      { match: { method: 'post', path: '/v1/emails' }, action: { status: 503, retry_after: 1 }, times: 2 },
    ]);
    expect(c.http('POST', '/v1/emails')).toEqual({ index: 1, action: { status: 503, retry_after: 1 } });
    expect(c.http('POST', '/v1/emails/')).toEqual({ index: 1, action: { status: 503, retry_after: 1 } });
    expect(c.http('POST', '/v1/emails')).toBeNull();
    expect(c.list().rules.map((r) => r.remaining)).toEqual([null, 0]);
    expect(c.http('GET', '/v1/emails/msg_abc')).toEqual({ index: 0, action: { delay_ms: 50 } });
    expect(c.http('GET', '/v1/emails/msg_abc/events')).toBeNull();
    expect(c.http('GET', '/v1/emails')).toBeNull();
  });

  it('without a path match every /v1 route of the method; an SMTP rule only its stage', () => {
    const c = createChaos();
    c.set([
      { match: { smtp: 'rcpt' }, action: { code: 451, message: 'try later' }, times: 1 },
      { match: { method: 'DELETE' }, action: { reset: true } },
    ]);
    expect(c.http('DELETE', '/v1/api-keys/key_1')).toEqual({ index: 1, action: { reset: true } });
    expect(c.http('GET', '/v1/api-keys')).toBeNull();
    expect(c.smtp('mail')).toBeNull();
    expect(c.smtp('rcpt')).toEqual({ index: 0, action: { code: 451, message: 'try later' } });
    expect(c.smtp('rcpt')).toBeNull();
  });

  it('draw probabilities from the seed: the same seed fails the same requests, another seed others', () => {
    const run = (seed: number) => {
      const c = createChaos();
      c.set([{ match: { path: '/v1/emails' }, action: { status: 500 }, probability: 0.5 }], seed);
      return Array.from({ length: 40 }, () => (c.http('POST', '/v1/emails') ? 1 : 0)).join('');
    };
    expect(run(7)).toBe(run(7));
    expect(run(7)).not.toBe(run(8));
    const hits = [...run(7)].filter((x) => x === '1').length;
    expect(hits).toBeGreaterThan(8);
    expect(hits).toBeLessThan(32);
  });

  it('set replaces the rules and reports the seed; clear removes them all', () => {
    const c = createChaos();
    expect(c.set([{ match: { smtp: 'data' }, action: { code: 554 } }], 42)).toEqual({
      rules: [{ match: { smtp: 'data' }, action: { code: 554 }, remaining: null }],
      seed: 42,
    });
    c.set([], 1);
    expect(c.smtp('data')).toBeNull();
    c.set([{ match: { smtp: 'data' }, action: { code: 554 } }]);
    expect(c.list().seed).toEqual(expect.any(Number));
    c.clear();
    expect(c.list().rules).toEqual([]);
  });

  it('answer a status with the service’s own code for it, else the generic one of its class', () => {
    expect([503, 429, 500, 404, 409, 422].map(chaosCode)).toEqual([
      'unavailable',
      'rate_limited',
      'internal_error',
      'not_found',
      'conflict',
      'validation_failed',
    ]);
    expect([418, 499, 502, 504, 599].map(chaosCode)).toEqual([
      'invalid_request',
      'invalid_request',
      'internal_error',
      'internal_error',
      'internal_error',
    ]);
  });

  it('tell an HTTP match that no route could ever take', () => {
    const routes = [
      { method: 'POST', path: '/v1/emails' },
      { method: 'POST', path: '/v1/emails/batch' },
      { method: 'GET', path: '/v1/emails/:id' },
      { method: 'DELETE', path: '/v1/api-keys/:id' },
    ];
    expect(unmatchable({}, routes)).toBeNull();
    expect(unmatchable({ method: 'post' }, routes)).toBeNull();
    expect(unmatchable({ path: '/v1/emails/{id}' }, routes)).toBeNull();
    expect(unmatchable({ method: 'GET', path: '/v1/emails/msg_1' }, routes)).toBeNull();
    expect(unmatchable({ method: 'POST', path: '/v1/emails/{id}' }, routes)).toBeNull(); // /v1/emails/batch
    expect(unmatchable({ path: '/v1/emails/' }, routes)).toBeNull();
    expect(unmatchable({ method: 'PATCH' }, routes)).toEqual({ field: 'method', message: 'no /v1 route takes PATCH' });
    expect(unmatchable({ path: '/v1/email' }, routes)?.field).toBe('path');
    expect(unmatchable({ path: '/v1/emails/{id}/x/y' }, routes)?.field).toBe('path');
    expect(unmatchable({ method: 'GET', path: '/v1/emails' }, routes)).toEqual({
      field: 'method',
      message: '/v1/emails takes POST, not GET',
    });
  });
});
