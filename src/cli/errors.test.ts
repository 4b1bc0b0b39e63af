import { describe, expect, it } from 'vitest';
import * as client from '../client/errors.js';
import { ApiError, ConnectionError, ResponseHeaders, SessionEndedError } from '../client/errors.js';
import {
  AuthError,
  CommandError,
  describeError as describeWith,
  exitCodeOf as exitCodeWith,
  problemOf as problemWith,
  UsageError,
} from './errors.js';

// As reportError calls them, with the client's error classes loaded.
const exitCodeOf = (err: unknown) => exitCodeWith(err, client);
const problemOf = (err: unknown) => problemWith(err, client);
const describeError = (err: unknown, command: string) => describeWith(err, command, client);

const apiError = (
  status: number,
  code: string,
  extra: Record<string, unknown> = {},
  headers: Record<string, string> = {},
  auth: ApiError['auth'] = 'key',
) =>
  new ApiError(
    status,
    { type: `https://docs.svc.dev/errors/${code}`, title: 'Title', status, code, request_id: 'req_abc', ...extra },
    new ResponseHeaders(headers),
    'sendEmail',
    auth,
  );

describe('failures, as a person reads them', () => {
  it('maps every failure to its exit code: 1 refused, 2 usage, 4 authentication', () => {
    expect(exitCodeOf(apiError(422, 'validation_failed'))).toBe(1);
    expect(exitCodeOf(apiError(403, 'insufficient_scope'))).toBe(1);
    expect(exitCodeOf(apiError(401, 'invalid_api_key'))).toBe(4);
    expect(exitCodeOf(new SessionEndedError(apiError(401, 'invalid_refresh_token').problem))).toBe(4);
    expect(exitCodeOf(new AuthError('no key'))).toBe(4);
    expect(exitCodeOf(new UsageError('bad flag'))).toBe(2);
    expect(exitCodeOf(new CommandError('timed out'))).toBe(1);
    expect(
      exitCodeOf(new ConnectionError('http://127.0.0.1:9/v1', Object.assign(new Error('x'), { code: 'ECONNREFUSED' }))),
    ).toBe(1);
    expect(exitCodeOf(new Error('disk full'))).toBe(1);
    // Told apart by class, not by name: an error of another program named like one of the client's is a failure.
    expect(exitCodeOf(Object.assign(new Error('x'), { name: 'BaseUrlError' }))).toBe(1);
    expect(problemOf(Object.assign(new Error('x'), { name: 'ConnectionError' })).code).toBe('failed');
  });

  it('says in one line what failed, the title and detail, the code and request id, and a hint', () => {
    const e = apiError(422, 'domain_not_verified', {
      title: 'Domain not verified',
      detail: 'example.org is not verified.',
      errors: [{ path: 'from', code: 'domain_not_verified', message: 'example.org is not verified' }],
    });
    const { line, code } = describeError(e, 'svc emails send');
    expect(code).toBe(1);
    expect(line).not.toContain('\n');
    expect(line).toBe(
      'svc emails send: Domain not verified — example.org is not verified. [domain_not_verified, req_abc]; ' +
        'hint: publish its records (`svc domains dns ID`), then `svc domains verify ID --wait`',
    );
  });

  it("hints with the wait the service asked for, the credential the call takes, the contract's fix for the code, or the docs page", () => {
    expect(describeError(apiError(429, 'rate_limited', {}, { 'retry-after': '12' }), 'svc emails send').line).toMatch(
      /hint: try again in 12 s$/,
    );
    expect(describeError(apiError(401, 'missing_credentials'), 'svc emails send').line).toMatch(
      /hint: pass --api-key, set SVC_API_KEY/,
    );
    expect(describeError(apiError(401, 'missing_credentials', {}, {}, 'session'), 'svc keys list').line).toMatch(
      /hint: sign in with `svc login`$/,
    );
    expect(
      describeError(apiError(404, 'not_found', { docs_url: 'https://docs.svc.dev/errors/not_found' }), 'svc emails get')
        .line,
    ).toMatch(/hint: Check the id and the path: `svc keys list`, `svc domains list` and `svc inbox` show ids\./);
    expect(
      describeError(apiError(418, 'teapot', { docs_url: 'https://docs.svc.dev/errors/teapot' }), 'svc emails get').line,
    ).toMatch(/hint: see https:\/\/docs\.svc\.dev\/errors\/teapot$/);
    expect(
      describeError(apiError(403, 'invite_required', { waitlist_url: 'https://svc.dev/waitlist' }), 'svc signup').line,
    ).toMatch(/join the waitlist at https:\/\/svc\.dev\/waitlist$/);
    expect(
      describeError(new SessionEndedError(apiError(401, 'invalid_refresh_token').problem), 'svc whoami').line,
    ).toMatch(/hint: sign in again with `svc login`$/);
    // A send too large is told the flag that attaches by URL, not the API's fields (`url` instead of `content`).
    expect(describeError(apiError(413, 'payload_too_large'), 'svc emails send').line).toMatch(
      /hint: attach large files by URL, fetched by the service at delivery \(--attach https:\/\/…\), not from disk$/,
    );
  });

  it('lists each field error once in place of a detail that summarises them, with no hint pointing at the list', () => {
    const e = apiError(422, 'validation_failed', {
      title: 'Validation failed',
      detail: 'reply_to: must be an array of at most 10 addresses; cc.0: "x" is not a valid email address',
      errors: [
        { path: 'reply_to', code: 'invalid_type', message: 'must be an array of at most 10 addresses' },
        { path: 'reply_to', code: 'too_big', message: 'must be an array of at most 10 addresses' },
        { path: 'cc.0', code: 'invalid', message: '"x" is not a valid email address' },
        { path: 'bcc.0', code: 'invalid', message: '"y" is not a valid email address' },
      ],
    });
    expect(describeError(e, 'svc emails send').line).toBe(
      'svc emails send: Validation failed — reply_to: must be an array of at most 10 addresses; cc.0: "x" is not a valid email address; ' +
        'bcc.0: "y" is not a valid email address [validation_failed, req_abc]',
    );
  });

  it('says a prompt cancelled with Ctrl-C was cancelled, nothing more', () => {
    const cancelled = Object.assign(new Error('User force closed the prompt with SIGINT'), { name: 'ExitPromptError' });
    expect(describeError(cancelled, 'svc login')).toEqual({ code: 1, line: 'svc login: cancelled' });
  });

  it("gives every failure a Problem for --json, the service's own when there is one", () => {
    expect(problemOf(apiError(409, 'idempotency_conflict'))).toMatchObject({
      status: 409,
      code: 'idempotency_conflict',
      request_id: 'req_abc',
    });
    expect(problemOf(new ConnectionError('http://127.0.0.1:9/v1', new Error('x')))).toMatchObject({
      code: 'connection_failed',
    });
    expect(problemOf(new AuthError('not logged in'))).toMatchObject({
      code: 'credentials_required',
      title: 'not logged in',
    });
  });
});
