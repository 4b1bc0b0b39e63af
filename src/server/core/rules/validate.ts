import type { z } from 'zod';
import type { FieldError } from '../../../contract/common.js';
import { nearest } from '../../../lib/nearest.js';
import { ServiceError } from '../errors.js';

// Shape problems (wrong JSON type, missing or unknown field) are 400; a well-formed value that breaks a rule is 422.
const SHAPE_CODES = new Set(['invalid_type', 'unrecognized_keys', 'invalid_union', 'invalid_key']);

/** How deep objects and arrays may nest in a body: deeper JSON is refused before anything walks it. */
const MAX_BODY_DEPTH = 64;
/** At most this many entries in `errors[]`: a huge body must not make a huge answer. */
const MAX_FIELD_ERRORS = 100;

// Generic wording of zod's issues. Wording that belongs to one field (`reply_to`, ids) lives with its schema in the
// contract and takes precedence over this.
const TYPE_WORDS: Record<string, string> = {
  string: 'must be a string',
  number: 'must be a number',
  int: 'must be a whole number',
  boolean: 'must be true or false',
  array: 'must be an array',
  object: 'must be an object',
  record: 'must be an object',
};
const FORMAT_WORDS: Record<string, string> = {
  email: 'must be an email address',
  datetime: 'must be a date and time such as 2026-08-01T09:30:00Z',
  url: 'must be a URL',
};

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/** The plain-words message of an issue, for a schema that gives none of its own. */
function plainWords(issue: z.core.$ZodRawIssue): string | undefined {
  switch (issue.code) {
    case 'invalid_type':
      return TYPE_WORDS[issue.expected] ?? `must be ${issue.expected}`;
    case 'too_big': {
      const max = Number(issue.maximum);
      if (issue.origin === 'string') return `must be at most ${plural(max, 'character')}`;
      if (issue.origin === 'array' || issue.origin === 'set') return `must have at most ${plural(max, 'item')}`;
      return issue.inclusive ? `must be at most ${max}` : `must be less than ${max}`;
    }
    case 'too_small': {
      const min = Number(issue.minimum);
      if (issue.origin === 'string')
        return min === 1 ? 'must not be empty' : `must be at least ${plural(min, 'character')}`;
      if (issue.origin === 'array' || issue.origin === 'set') return `must have at least ${plural(min, 'item')}`;
      return issue.inclusive ? `must be at least ${min}` : `must be more than ${min}`;
    }
    case 'invalid_value':
      return issue.values.length === 1
        ? `must be ${String(issue.values[0])}`
        : `must be one of ${issue.values.map(String).join(', ')}`;
    case 'invalid_format':
      return FORMAT_WORDS[issue.format] ?? `is not in the expected format`;
    case 'not_multiple_of':
      return `must be a multiple of ${issue.divisor}`;
    case 'invalid_union':
      return 'has the wrong type';
    case 'invalid_key':
      return 'has a key that is not allowed';
    case 'invalid_element':
      return 'has a value that is not allowed';
    default:
      return undefined; // a refinement's own message
  }
}

function unknownFieldMessage(field: string, known: readonly string[]): string {
  const shown = JSON.stringify(field.length > 64 ? `${field.slice(0, 64)}…` : field);
  if (known.length === 0) return `unknown field ${shown}: this request takes no fields`;
  const near = nearest(field, known);
  return near ? `unknown field ${shown}; did you mean "${near}"?` : `unknown field ${shown}`;
}

/**
 * A union whose value has the JSON type of exactly one branch (`to` given as an array of 51 strings) reports that
 * branch's issues (422 `too_big`), not a shape error; otherwise the union issue stays (400).
 */
function matchedBranch(issue: z.core.$ZodIssue): z.core.$ZodIssue[] {
  if (issue.code !== 'invalid_union') return [issue];
  const typed = issue.errors.filter((branch) => !branch.some((i) => i.code === 'invalid_type' && i.path.length === 0));
  const [only] = typed;
  if (!only || typed.length !== 1) return [issue];
  return only.map((i) => ({ ...i, path: [...issue.path, ...i.path] }) as z.core.$ZodIssue).flatMap(matchedBranch);
}

function pathOf(path: readonly PropertyKey[]): string {
  return path.map(String).join('.') || '(body)';
}

/** True when objects and arrays nest deeper than `max` levels (walked without recursion, so any depth is safe). */
function nestsDeeperThan(value: unknown, max: number): boolean {
  const stack: [object, number][] = value !== null && typeof value === 'object' ? [[value, 1]] : [];
  while (stack.length) {
    const [node, depth] = stack.pop()!;
    if (depth > max) return true;
    for (const child of Array.isArray(node) ? node : Object.values(node)) {
      if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
    }
  }
  return false;
}

/** Validates a value against a contract schema, throwing the decided 400 or 422 Problem with one entry per field. */
export function validate<T extends z.ZodType>(schema: T, value: unknown, where: 'body' | 'query'): z.output<T> {
  if (where === 'body' && nestsDeeperThan(value, MAX_BODY_DEPTH)) {
    const message = `must not nest objects and arrays more than ${MAX_BODY_DEPTH} levels deep`;
    throw new ServiceError('invalid_request', `(body): ${message}`, {
      errors: [{ path: '(body)', code: 'too_deep', message }],
    });
  }
  // The fields of each strict object that refused a key, to suggest the nearest one.
  const fieldsAt = new Map<string, string[]>();
  const result = schema.safeParse(value, {
    reportInput: true,
    error: (issue) => {
      if (issue.code === 'unrecognized_keys') {
        const shape = (issue.inst as { shape?: Record<string, unknown> } | undefined)?.shape ?? {};
        fieldsAt.set(pathOf(issue.path ?? []), Object.keys(shape));
      }
      return plainWords(issue);
    },
  });
  if (result.success) return result.data;

  const errors: FieldError[] = [];
  let total = 0;
  let shape = false;
  // One entry per field and rule: zod may report one wrong value twice (a string given for an array of at most 10
  // is both the wrong type and, by its length, too long), and a schema's own wording makes both read the same.
  const seen = new Set<string>();
  const add = (e: FieldError) => {
    // Past the cap only count (a repeat there counts again: the count is "and N more", not a promise).
    if (total >= MAX_FIELD_ERRORS) {
      total++;
      return;
    }
    const key = `${e.path}\u0000${e.message}`;
    if (seen.has(key)) return;
    seen.add(key);
    total++;
    errors.push(e);
  };
  for (const issue of result.error.issues.flatMap(matchedBranch)) {
    if (SHAPE_CODES.has(issue.code)) shape = true;
    const path = pathOf(issue.path);
    const input = (issue as { input?: unknown }).input;
    if (issue.code === 'unrecognized_keys') {
      const known = fieldsAt.get(path) ?? [];
      for (const k of issue.keys) {
        // Past the cap only count: finding the nearest field costs time that a body of many keys must not buy.
        if (total >= MAX_FIELD_ERRORS) total++;
        else add({ path: pathOf([...issue.path, k]), code: 'unknown_field', message: unknownFieldMessage(k, known) });
      }
    } else if ((issue.code === 'invalid_type' || issue.code === 'invalid_union') && input === undefined) {
      add({ path, code: 'required', message: 'is required' });
    } else if (where === 'query' && issue.code === 'invalid_type' && Array.isArray(input)) {
      add({ path, code: 'repeated', message: 'must be given once' });
    } else if (issue.path.length === 0 && issue.code === 'invalid_type') {
      add({ path, code: issue.code, message: `must be a JSON ${issue.expected === 'array' ? 'array' : 'object'}` });
    } else {
      add({ path, code: issue.code, message: issue.message });
    }
  }
  const summary = errors
    .slice(0, 5)
    .map((e) => `${e.path}: ${e.message}`)
    .join('; ');
  const more = total > 5 ? ` (and ${total - 5} more)` : '';
  // A malformed query value (e.g. `limit=0`, `limit=abc`) is 400 `invalid_request` (docs/api.md#errors, docs/api.md#pagination).
  const code = shape || where === 'query' ? 'invalid_request' : 'validation_failed';
  throw new ServiceError(code, `${where === 'query' ? 'Query string: ' : ''}${summary}${more}`, { errors });
}
