// A response made into a call's answer: a 2xx parsed with the schema its endpoint names, anything else thrown as an
// ApiError carrying the service's Problem (or one made of the status, for an answer that is not a Problem).
import type { z } from 'zod';
import { Problem } from '../contract/common.js';
import type { AuthKind } from '../contract/endpoints.js';
import { ApiError, ContractError } from './errors.js';
import { type Exchange, parseJson } from './exchange.js';
import type { Reply } from './options.js';

/** What the client reads of an entry of the endpoint table (or of the inbox stream, which is none). */
export interface Endpointish {
  method: string;
  path: string;
  auth?: AuthKind;
  success: readonly [number, z.ZodType | null];
}

/** A 2xx parsed with the contract's schema; anything else thrown as an ApiError carrying the Problem. */
export function answerOf<T>(
  base: string,
  name: string,
  e: Endpointish,
  res: Exchange,
  auth: AuthKind = e.auth ?? 'none',
): Reply<T> {
  const json = parseJson(res.text);
  if (res.status >= 200 && res.status < 300) {
    const schema = e.success[1];
    if (!schema)
      return {
        status: res.status,
        body: undefined as T,
        raw: json,
        text: res.text,
        bytes: res.bytes,
        headers: res.headers,
      };
    const checked = schema.safeParse(json);
    if (!checked.success) {
      const issue = checked.error.issues[0];
      const where = issue?.path.length ? issue.path.join('.') : 'body';
      throw new ContractError(name, res.status, json === undefined ? 'not JSON' : `${where}: ${issue?.message}`, base);
    }
    return {
      status: res.status,
      body: checked.data as T,
      raw: json,
      text: res.text,
      bytes: res.bytes,
      headers: res.headers,
    };
  }
  const problem = Problem.safeParse(json);
  throw new ApiError(
    res.status,
    problem.success
      ? problem.data
      : {
          type: 'about:blank',
          title: statusText(res.status),
          status: res.status,
          code: 'unexpected_response',
          detail: res.text.slice(0, 200) || undefined,
          request_id: res.headers.get('x-request-id') ?? undefined,
        },
    res.headers,
    name,
    auth,
    base,
  );
}

/** The standard reason phrase of a status (node:http's table, loaded only for an answer that is not a Problem). */
function statusText(status: number): string {
  return process.getBuiltinModule('node:http').STATUS_CODES[status] ?? 'Error';
}
