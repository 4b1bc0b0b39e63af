// Data on stdout in one of three shapes: a table on a terminal, tab-separated lines for scripts, or with --json
// exactly the API's body. cli-table3 is loaded only when a table is drawn.
import type { IO } from './io.js';

export interface Column<T> {
  header: string;
  value(row: T): string | number | boolean | null | undefined;
  /** An id: kept whole on a narrow terminal as long as the other columns can give way, so it can be copied. */
  id?: boolean;
  /** A timestamp: shown to the minute when the table has to give way to fit the terminal. */
  time?: boolean;
}

type Cell = string | number | boolean | null | undefined;

function text(v: Cell): string {
  return v === null || v === undefined || v === '' ? '-' : String(v);
}

/** What a terminal acts on rather than shows: C0 controls (escape among them), DEL and the C1 controls. */
const CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

/**
 * Text of a message (or anything else a sender wrote) as it may reach a terminal, piped or not: its control characters
 * shown as the symbols for them (ESC as ␛, a C1 control as its code), never sent, so that a mail can neither clear the
 * screen, rewrite a line, nor hide a link. Line breaks and tabs are kept.
 */
export function visible(s: string): string {
  return s.replace(/\r\n/g, '\n').replace(CONTROLS, (c) => {
    const code = c.charCodeAt(0);
    if (code < 0x20) return String.fromCharCode(0x2400 + code);
    return code === 0x7f ? '\u2421' : `<U+${code.toString(16).toUpperCase().padStart(4, '0')}>`;
  });
}

/** A value as one line (a table cell, a tab-separated field): tabs and line breaks become spaces, controls symbols. */
export function oneLine(v: Cell): string {
  return visible(text(v).replace(/[\t\r\n]+/g, ' '));
}
const field = oneLine;

/**
 * Rows as a table on a terminal, else one tab-separated line per row without a header (like `gh`), for `cut`/`awk`.
 * On a terminal the table fits its width (`io.columns`): times lose their seconds first, then the widest cells give
 * way and end in `…`, ids last; `--wide` (no width) prints whole values, and piped lines are never cut. Columns are
 * set apart by two spaces, without borders, which would take three of every column's characters.
 */
export async function printTable<T>(io: IO, rows: readonly T[], columns: readonly Column<T>[]): Promise<void> {
  if (!io.stdoutIsTTY) {
    for (const row of rows) io.print(columns.map((c) => field(c.value(row))).join('\t'));
    return;
  }
  if (rows.length === 0) return;
  // A line break inside a cell would make a row of several lines: a table cell shows one line, as a piped field does.
  let cells = rows.map((row) => columns.map((c) => field(c.value(row))));
  const [{ default: Table }, measure] = await Promise.all([
    import('cli-table3'),
    terminalWidths([...columns.map((c) => c.header), ...cells.flat()]),
  ]);
  const gaps = 2 * (columns.length - 1);
  const widthsOf = () => columns.map((c, i) => Math.max(measure.of(c.header), ...cells.map((r) => measure.of(r[i]!))));
  // Whole values size the columns themselves; only a table that has to give way is given widths.
  let widths: number[] | undefined;
  if (io.columns !== undefined && sum(widthsOf()) + gaps > io.columns) {
    cells = cells.map((r) => r.map((v, i) => (columns[i]!.time ? shortTime(v) : v)));
    widths = fitWidths(
      widthsOf(),
      columns.map((c) => Boolean(c.id)),
      io.columns - gaps,
    );
  }
  const none = {
    top: '',
    'top-mid': '',
    'top-left': '',
    'top-right': '',
    bottom: '',
    'bottom-mid': '',
    'bottom-left': '',
    'bottom-right': '',
    left: '',
    'left-mid': '',
    mid: '',
    'mid-mid': '',
    right: '',
    'right-mid': '',
    middle: '  ',
  };
  const table = new Table({
    head: columns.map((c) => io.out.bold(c.header)),
    style: { head: [], border: [], compact: true, 'padding-left': 0, 'padding-right': 0 },
    chars: none,
    ...(widths ? { colWidths: widths } : {}),
    truncate: '…',
  });
  for (const row of cells) table.push(row);
  // cli-table3 pads the last column too: a line ends where its text does.
  io.print(
    table
      .toString()
      .split('\n')
      .map((l) => l.trimEnd())
      .join('\n'),
  );
  if (widths && cells.some((r) => r.some((v, i) => measure.of(v) > widths[i]!))) {
    io.info(io.err.dim('… marks values cut to fit the terminal; --wide or --json shows them whole.'));
  }
}

const sum = (ws: readonly number[]) => ws.reduce((a, b) => a + b, 0);

/** `2026-08-01T09:30:00.000Z` → `2026-08-01 09:30Z`, for a table that has to give way; other values unchanged. */
export function shortTime(v: string): string {
  const m = /^(\d{4}-\d\d-\d\d)T(\d\d:\d\d):\d\d(?:\.\d+)?Z$/.exec(v);
  return m ? `${m[1]} ${m[2]}Z` : v;
}

/** Narrower than this a column shows too little to be told apart (`LAST…`, `2026…`); ids may go below it last. */
const MIN_WIDTH = 5;

/**
 * Column widths within `budget` characters: the widest columns give way first (each is cut to the same width, its
 * cells then ending in `…`), and ids keep their width while the others can still give way. Where even the narrowest
 * layout does not fit, every column is cut alike down to one character.
 */
function fitWidths(natural: readonly number[], ids: readonly boolean[], budget: number): number[] {
  if (sum(natural) <= budget) return [...natural];
  const floorOf = (w: number) => Math.min(w, MIN_WIDTH);
  const floor = natural.map(floorOf);
  const others = natural.map((_, i) => !ids[i]);
  const keptIds = natural.map((w, i) => (ids[i] ? w : floorOf(w)));
  if (sum(keptIds) <= budget) return capped(natural, floor, others, budget);
  const all = natural.map(() => true);
  if (sum(floor) <= budget) return capped(keptIds, floor, all, budget);
  return capped(
    floor,
    floor.map(() => 1),
    all,
    budget,
  );
}

/**
 * `widths` with the columns `which` cut down to one cap (never below their `floor`), the largest cap that fits
 * `budget`; what is left over widens the cut columns one character at a time.
 */
function capped(
  widths: readonly number[],
  floor: readonly number[],
  which: readonly boolean[],
  budget: number,
): number[] {
  const at = (cap: number) => widths.map((w, i) => (which[i] ? Math.max(floor[i]!, Math.min(w, cap)) : w));
  let lo = 0;
  let hi = Math.max(...widths);
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (sum(at(mid)) <= budget) lo = mid;
    else hi = mid - 1;
  }
  const result = at(lo);
  let spare = budget - sum(result);
  for (const [i, w] of result.entries()) {
    if (spare <= 0) break;
    if (which[i] && w < widths[i]!) {
      result[i] = w + 1;
      spare--;
    }
  }
  return result;
}

/** How many columns text takes on a terminal, and text cut to a number of columns. */
export interface Widths {
  /**
   * Columns a string takes (string-width): two for East Asian wide characters and emoji, an emoji sequence as one,
   * none for combining marks, zero-width characters and colour codes.
   */
  of(s: string): number;
  /** `s` cut to `width` columns, ending in `…` when cut; never inside what shows as one character. */
  cut(s: string, width: number): string;
}

/** Printable ASCII: a column a character, as every terminal shows it. */
const ascii: Widths = {
  of: (s) => s.length,
  cut: (s, width) => (s.length <= width ? s : `${s.slice(0, width - 1)}…`),
};
const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;

let loaded: Promise<Widths> | undefined;
/**
 * The terminal widths of `texts` (any text when none are given). string-width is loaded only when some text is not
 * printable ASCII: its Intl.Segmenter and Unicode property patterns weigh on a command's start (bench/README.md,
 * bench:cli-start), which a table of ids, dates and addresses does not need.
 */
export function terminalWidths(texts?: readonly string[]): Promise<Widths> {
  if (texts?.every((t) => PRINTABLE_ASCII.test(t))) return Promise.resolve(ascii);
  loaded ??= import('string-width').then(({ default: of }) => {
    const graphemes = new Intl.Segmenter();
    return {
      of,
      cut(s, width) {
        if (of(s) <= width) return s;
        let out = '';
        let w = 0;
        for (const { segment } of graphemes.segment(s)) {
          const sw = of(segment);
          if (w + sw > width - 1) break;
          out += segment;
          w += sw;
        }
        return `${out}…`;
      },
    };
  });
  return loaded;
}

/** Label/value pairs: aligned on a terminal, `label<TAB>value` lines otherwise. */
export function printFields(io: IO, fields: readonly (readonly [string, Cell])[]): void {
  const width = Math.max(...fields.map(([label]) => label.length));
  for (const [label, value] of fields) {
    io.print(
      io.stdoutIsTTY ? `${io.out.bold(label.padEnd(width))}  ${visible(text(value))}` : `${label}\t${field(value)}`,
    );
  }
}

/** The API's body, unchanged (as received, before parsing), on stdout. */
export function printJson(io: IO, body: unknown): void {
  io.print(JSON.stringify(body, null, 2));
}

/** After a list on a terminal: says when it is empty, and how to get the next page. */
export function printMore(io: IO, page: { data: { id: string }[]; has_more: boolean }, command: string): void {
  if (page.data.length === 0 && io.stdoutIsTTY) io.info('Nothing yet.');
  if (page.has_more && io.stderrIsTTY) io.info(`More: ${command} --after ${page.data.at(-1)!.id}`);
}
