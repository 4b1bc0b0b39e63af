// The seed file (`svc serve --seed FILE`, SVC_SEED) read and checked before anything opens: YAML or JSON (a JSON file is
// YAML too), each refusal naming the file, the line and the field (contract/seed-file.ts says what each field expects).
// `startSandbox({ seed })` hands the same shape as an object: the same refusals, without a line.
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { isMap, isScalar, LineCounter, parseDocument, type Document, type Node } from 'yaml';
import { checkSeedFile, type SeedFile, type SeedProblem, seedPath } from '../contract/seed-file.js';
import { normalizeDomainName } from './core/domains.js';
import { type ServeOptions, ServeUsageError } from './options.js';

/** The seed a start applies: from a file (its name kept for the log) or an object; null for none. */
export interface SeedSource {
  seed: SeedFile;
  /** Where it came from, as the log names it: the file, or `startSandbox({ seed })`. */
  from: string;
}

/** The seed of a start's options (`seedFile` or `seedObject`), checked; null for none. */
export function seedSource(opts: Pick<ServeOptions, 'seedFile' | 'seedObject'>): SeedSource | null {
  if (opts.seedFile !== undefined && opts.seedObject !== undefined)
    throw new ServeUsageError('a seed file and a seed object do not go together; give one.');
  if (opts.seedFile !== undefined) return readSeedFile(opts.seedFile);
  if (opts.seedObject !== undefined) return checkSeedObject(opts.seedObject);
  return null;
}

/** Reads and checks a seed file; a ServeUsageError naming the file, the line and the field when it is refused. */
export function readSeedFile(file: string): SeedSource {
  const name = basename(file);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    const why = e.code === 'ENOENT' ? 'no such file' : e.code === 'EISDIR' ? 'a directory, not a file' : e.message;
    throw new ServeUsageError(`--seed ${file}: ${why}.`);
  }
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true });
  const syntax = doc.errors[0];
  if (syntax) {
    const line = lines.linePos(syntax.pos[0]).line;
    throw new ServeUsageError(`${name}:${line}: not valid YAML or JSON: ${plainYamlError(syntax.message)}`);
  }
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: 100 });
  } catch (err) {
    throw new ServeUsageError(`${name}: not valid YAML or JSON: ${(err as Error).message}`);
  }
  const checked = checked_(value);
  if (checked.ok) return { seed: checked.seed, from: file };
  const located = checked.problems
    .map((p) => ({ ...p, line: lineOf(doc, lines, p) }))
    .sort((a, b) => Number(Boolean(b.unknown)) - Number(Boolean(a.unknown)) || a.line - b.line);
  const first = located[0]!;
  throw new ServeUsageError(`${name}:${first.line}: ${told(first)}${more(located.length)}`);
}

/** Checks a seed given as an object (`startSandbox({ seed })`): the file's refusals, without a line. */
export function checkSeedObject(value: unknown): SeedSource {
  const checked = checked_(value);
  if (checked.ok) return { seed: checked.seed, from: 'the seed given to startSandbox' };
  throw new ServeUsageError(
    `seed: ${checked.problems.map(told).slice(0, 3).join('; ')}${more(checked.problems.length, 3)}`,
  );
}

/**
 * The contract's checks, then the domain names as the API would take them (core's rule: no public suffix, no IP), so a
 * name the server would refuse is refused here, with its line, and not half-way through the start.
 */
function checked_(value: unknown): ReturnType<typeof checkSeedFile> {
  const checked = checkSeedFile(value);
  if (!checked.ok) return checked;
  const problems: SeedProblem[] = [];
  (checked.seed.domains ?? []).forEach((d, i) => {
    try {
      normalizeDomainName(d.name);
    } catch (err) {
      const why = (err as Error).message.replace(/^.*is not a domain you can send from: /, '').replace(/\.$/, '');
      problems.push({ path: ['domains', i, 'name'], message: `expected a domain you can send from; ${why}` });
    }
  });
  return problems.length ? { ok: false, problems } : checked;
}

const told = (p: SeedProblem) => (p.path.length ? `${seedPath(p.path)}: ${p.message}` : p.message);
const more = (n: number, shown = 1) => (n > shown ? ` (and ${n - shown} more)` : '');

/**
 * The line of the node a refusal is about: the field's own (for an unknown field, its key), else the nearest
 * enclosing one the file has (a field left out: the item that lacks it).
 */
function lineOf(doc: Document, lines: LineCounter, p: SeedProblem): number {
  for (let n = p.path.length; n >= 0; n--) {
    const path = p.path.slice(0, n);
    const node = nodeAt(doc, path);
    if (node?.range) return lines.linePos(node.range[0]).line;
  }
  return 1;
}

/** The node at a path; for the last step into a mapping, the key's node (where a person looks for the field). */
function nodeAt(doc: Document, path: (string | number)[]): Node | null {
  if (path.length === 0) return (doc.contents as Node | null) ?? null;
  const parent = path.length === 1 ? doc.contents : doc.getIn(path.slice(0, -1), true);
  const last = path[path.length - 1];
  if (isMap(parent)) {
    const pair = parent.items.find((it) => isScalar(it.key) && String(it.key.value) === String(last));
    return (pair?.key as Node | undefined) ?? null;
  }
  const node = doc.getIn(path, true);
  return node && typeof node === 'object' && 'range' in node ? (node as Node) : null;
}

/** yaml's message without its own position (the line is given first) and its code frame. */
function plainYamlError(message: string): string {
  return message
    .split('\n')[0]!
    .replace(/ at line \d+, column \d+:?$/, '')
    .replace(/:$/, '');
}
