// What every command module shares: how its action runs (the Runner), its help examples, and parsers for option
// values. Kept free of heavy imports: every command's wiring loads this, also for `svc --version`.
import { InvalidArgumentError, type Command } from 'commander';
import type { Context } from './context.js';
import { parseDuration } from '../lib/duration.js';

/** A command's work: a plain function of a Context and its parsed options (gh's `xRun`). */
export type Run<O> = (ctx: Context, opts: O) => Promise<void>;

/**
 * How an action runs a command's work. The program's runner builds a Context from the global options and reports a
 * failure as one line and an exit code; a test's runner records the parsed options instead.
 */
export type Runner = <O>(cmd: Command, run: Run<O>, opts: O) => Promise<void>;

/** `--limit` and `--after` of the list commands. */
export interface PageOptions {
  limit?: number;
  after?: string;
}

/** Adds the `Examples:` section every command's --help ends with. */
export function examples(cmd: Command, ...lines: string[]): Command {
  return cmd.addHelpText('after', `\nExamples:\n${lines.map((l) => `  $ ${l}`).join('\n')}\n`);
}

/** `svc keys create`: the command's path from the root, for messages. */
export function commandPath(cmd: Command): string {
  const names: string[] = [];
  for (let c: Command | null = cmd; c; c = c.parent) names.unshift(c.name());
  return names.join(' ');
}

/**
 * The command as the person typed it, for messages: `svc inbox` when `svc inbox` ran its default subcommand `list`,
 * `svc inbox list` when they wrote `list`. Commander hands a parent's operands on to the subcommand it runs, so the
 * parent's first operand is the subcommand's name exactly when it was typed.
 */
export function typedCommand(cmd: Command): string {
  const names: string[] = [];
  for (let c: Command | null = cmd; c; c = c.parent) {
    const typed = !c.parent || [c.name(), ...c.aliases()].includes(c.parent.args[0] ?? '');
    if (typed) names.unshift(c.name());
  }
  return names.join(' ');
}

/** A whole number from `min` to `max`. */
export function int(flag: string, min: number, max: number) {
  return (v: string): number => {
    const n = Number(v);
    if (!/^\d+$/.test(v) || n < min || n > max)
      throw new InvalidArgumentError(`${flag} must be a whole number from ${min} to ${max}.`);
    return n;
  };
}

/** A repeatable option: every occurrence is kept. */
export function repeat(v: string, prev: string[] = []): string[] {
  return [...prev, v];
}

/** A repeatable option whose values may also be comma-separated (`--scope a,b --scope c`). */
export function list(v: string, prev: string[] = []): string[] {
  return [
    ...prev,
    ...v
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
  ];
}

/** Seconds, or a number with a unit: `30s`, `10m`, `1h`, `2d`. Returns milliseconds. */
export function duration(flag: string) {
  return (v: string): number => {
    const ms = parseDuration(v);
    if (ms === null) throw new InvalidArgumentError(`${flag} takes seconds or a duration such as 30s, 10m, 1h, 2d.`);
    return ms;
  };
}

/** An ISO 8601 date-time with an offset (`2026-09-01T09:00:00Z`, `…+02:00`), passed on as written. */
export function timestamp(flag: string) {
  return (v: string): string => {
    if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/.test(v) || Number.isNaN(Date.parse(v))) {
      throw new InvalidArgumentError(`${flag} takes an ISO 8601 time with an offset, e.g. 2026-09-01T09:00:00Z.`);
    }
    return v;
  };
}

/** A duration in words: 90000 → "1m 30s"; under a minute to the tenth of a second, 1500 → "1.5s". */
export function humanDuration(ms: number): string {
  const tenths = Math.round(ms / 100);
  if (tenths < 600) return `${tenths / 10}s`;
  const s = Math.round(ms / 1000);
  const m = Math.floor(s / 60);
  return s % 60 ? `${m}m ${s % 60}s` : `${m}m`;
}
