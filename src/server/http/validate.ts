import type { z } from 'zod';
import type { FieldError } from '../../contract/common.js';
import { ServiceError } from '../core/errors.js';

// Shape problems (wrong JSON type, missing or unknown field) are 400; a well-formed value that breaks a rule is 422.
const SHAPE_CODES = new Set(['invalid_type', 'unrecognized_keys', 'invalid_union', 'invalid_key']);

/**
 * A union whose value has the JSON type of exactly one branch (`to` given as an array of 51 strings) reports that
 * branch's issues (422 `too_big`), not a shape error; otherwise the union issue stays (400).
 */
function matchedBranch(issue: z.core.$ZodIssue): z.core.$ZodIssue[] {
  if (issue.code !== 'invalid_union') return [issue];
  const typed = issue.errors.filter((branch) => !branch.some((i) => i.code === 'invalid_type' && i.path.length === 0));
  if (typed.length !== 1) return [issue];
  return typed[0]!.map((i) => ({ ...i, path: [...issue.path, ...i.path] }) as z.core.$ZodIssue).flatMap(matchedBranch);
}

function pathOf(path: PropertyKey[]): string {
  return path.map(String).join('.') || '(body)';
}

/** Validates a value against a contract schema, throwing the decided 400 or 422 Problem. */
export function validate<T extends z.ZodType>(schema: T, value: unknown, where: 'body' | 'query'): z.output<T> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const errors: FieldError[] = [];
  let shape = false;
  for (const issue of result.error.issues.flatMap(matchedBranch)) {
    if (SHAPE_CODES.has(issue.code)) shape = true;
    if (issue.code === 'unrecognized_keys') {
      for (const k of issue.keys) {
        errors.push({ path: pathOf([...issue.path, k]), code: 'unknown_field', message: `unknown field "${k}"` });
      }
    } else if (issue.code === 'invalid_type' && issue.message.endsWith('received undefined')) {
      errors.push({ path: pathOf(issue.path), code: 'required', message: 'is required' });
    } else {
      errors.push({ path: pathOf(issue.path), code: issue.code, message: issue.message });
    }
  }
  const summary = errors.map((e) => `${e.path}: ${e.message}`).join('; ');
  // A malformed query value (e.g. `limit=0`, `limit=abc`) is 400 `invalid_request` (decisions.md "400 vs 422", "pagination").
  const code = shape || where === 'query' ? 'invalid_request' : 'validation_failed';
  throw new ServiceError(code, `Invalid ${where}: ${summary}`, { errors });
}
