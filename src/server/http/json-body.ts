// A request's JSON body: read within its limits (body.ts), decoded as UTF-8, parsed, and validated with the endpoint's
// schema (core/rules/validate.ts), each failure its own Problem. A send's long text and HTML are kept as their UTF-8 bytes
// (long-strings.ts).
import type { Context } from 'hono';
import { isUtf8 } from 'node:buffer';
import type { z } from 'zod';
import { Empty } from '../../contract/common.js';
import { ServiceError } from '../core/errors.js';
import { validate } from '../core/rules/validate.js';
import { readIncoming, tooLarge, type BodyBudget, type BodyLimits } from './body.js';
import { parseJson } from './long-strings.js';
import { type Env, incomingOf } from './request.js';

/**
 * The members of a body kept as their UTF-8 bytes when they are long, by operation: a send's text and HTML, which run
 * to 40 MiB and which nothing before the store needs as a string (core's SendInput takes them so). Their schemas take
 * any string, so they are validated as ''.
 */
const LONG_MEMBERS: Partial<Record<string, readonly string[]>> = { sendEmail: ['text', 'html'] };

const NO_BODY = Buffer.alloc(0);

/**
 * The body of a request to operation `name`, whose body schema is `schema` (none: no body, or an empty object), made
 * into the value the handler gets; `release` gives its bytes back to the budget once the request is answered. A GET
 * or HEAD reads nothing.
 */
export function jsonBody(
  c: Context<Env>,
  name: string,
  schema: z.ZodType | undefined,
  limit: number,
  budget: BodyBudget,
  limits: BodyLimits,
): { body: Promise<unknown>; release: () => void } {
  const members = LONG_MEMBERS[name] ?? [];
  if (c.req.method === 'GET' || c.req.method === 'HEAD') {
    return { body: (async () => parseJsonBody(c, NO_BODY, schema, members))(), release: () => {} };
  }
  return bodyReader(c, limit, budget, limits, (bytes) => parseJsonBody(c, bytes, schema, members));
}

/**
 * The request's body, read straight from the socket's IncomingMessage (building a web ReadableStream per request cost
 * more than the rest of a send), or from the Request when the app is called in-process, and handed to `parse` once
 * whole: only what `parse` makes of it is kept, so the bytes of a 40 MiB send are let go as soon as it is parsed, but
 * for a long text kept as bytes, which is a view of them (the budget counts them until the answer all the same).
 */
function bodyReader<T>(
  c: Context<Env>,
  limit: number,
  budget: BodyBudget,
  limits: BodyLimits,
  parse: (bytes: Buffer) => T,
): { body: Promise<T>; release: () => void } {
  const incoming = incomingOf(c);
  if (incoming) {
    const read = readIncoming(incoming, limit, budget, limits.idleMs, limits.deadlineMs);
    return { body: read.body.then(parse), release: read.release };
  }
  const body = c.req.raw.arrayBuffer().then((b) => {
    if (b.byteLength > limit) throw tooLarge(limit);
    return parse(Buffer.from(b));
  });
  return { body, release: () => {} };
}

function parseJsonBody(
  c: Context<Env>,
  bytes: Buffer,
  schema: z.ZodType | undefined,
  members: readonly string[],
): unknown {
  // JSON travels as UTF-8 (RFC 8259 section 8.1), and decoding a stray byte as U+FFFD would change the request silently.
  if (!isUtf8(bytes))
    throw new ServiceError('invalid_json', 'The request body is not valid UTF-8; send the JSON encoded as UTF-8.');
  if (bytes.length === 0 && !schema) return undefined;
  // An operation whose body is wholly optional takes no body at all, with or without a Content-Type.
  if (bytes.length === 0 && schema?.safeParse({}).success) return validate(schema, {}, 'body');
  const type = ((c.req.header('content-type') ?? '').split(';')[0] ?? '').trim().toLowerCase();
  if (type !== 'application/json') {
    throw new ServiceError(
      'unsupported_content_type',
      'Send the request body as JSON with "Content-Type: application/json".',
    );
  }
  let parsed: ReturnType<typeof parseJson>;
  try {
    parsed = parseJson(bytes, members);
  } catch (err) {
    throw new ServiceError('invalid_json', `The request body is not valid JSON: ${(err as Error).message}`);
  }
  const value = validate(schema ?? Empty, parsed.value, 'body');
  // Validated with '' in their place, the members kept as bytes go back in.
  return Object.keys(parsed.bytes).length ? Object.assign(value as object, parsed.bytes) : value;
}
