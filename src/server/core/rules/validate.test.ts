import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { ServiceError } from '../errors.js';
import { validate } from './validate.js';

/** The Problem's detail and errors[] that validating `value` against `schema` answers with. */
function refusal(schema: z.ZodType, value: unknown) {
  try {
    validate(schema, value, 'body');
  } catch (err) {
    if (err instanceof ServiceError) return { code: err.code, detail: err.detail, errors: err.extra.errors };
    throw err;
  }
  throw new Error('accepted');
}

describe('validation errors', () => {
  it('names each field once, even where zod reports one wrong value twice in the same words', () => {
    // A string where an array of at most 3 is taken: the wrong type, and by its length also too long. With one
    // wording for both, the client would read the same sentence twice.
    const wording = { error: 'must be an array of at most 3 addresses' };
    const schema = z.strictObject({ reply_to: z.array(z.string(), wording).max(3, wording).optional() });
    const r = refusal(schema, { reply_to: 'ada@example.org' });
    expect(r.errors).toEqual([
      { path: 'reply_to', code: 'invalid_type', message: 'must be an array of at most 3 addresses' },
    ]);
    expect(r.detail).toBe('reply_to: must be an array of at most 3 addresses');
  });

  it('keeps two rules broken by one field, and the same rule broken by two fields', () => {
    const schema = z.strictObject({ a: z.string().min(5).regex(/^\d+$/, 'must be digits'), b: z.string().min(5) });
    const r = refusal(schema, { a: 'x', b: 'y' });
    expect(r.errors!.map((e) => `${e.path}: ${e.message}`)).toEqual([
      'a: must be at least 5 characters',
      'a: must be digits',
      'b: must be at least 5 characters',
    ]);
  });
});
