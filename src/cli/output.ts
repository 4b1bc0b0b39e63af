// Data on stdout in one of three shapes: a table on a terminal, tab-separated lines for scripts, or with --json
// exactly the API's body. cli-table3 is loaded only when a table is drawn.
import type { IO } from './io.js';

export interface Column<T> {
  header: string;
  value(row: T): string | number | boolean | null | undefined;
}

type Cell = string | number | boolean | null | undefined;

function text(v: Cell): string {
  return v === null || v === undefined || v === '' ? '-' : String(v);
}

/** A value as one tab-separated field: tabs and line breaks inside it would split the line, so they become spaces. */
function field(v: Cell): string {
  return text(v).replace(/[\t\r\n]+/g, ' ');
}

/** Rows as a table on a terminal, else one tab-separated line per row without a header (like `gh`), for `cut`/`awk`. */
export async function printTable<T>(io: IO, rows: readonly T[], columns: readonly Column<T>[]): Promise<void> {
  if (!io.stdoutIsTTY) {
    for (const row of rows) io.print(columns.map((c) => field(c.value(row))).join('\t'));
    return;
  }
  if (rows.length === 0) return;
  const { default: Table } = await import('cli-table3');
  const table = new Table({
    head: columns.map((c) => io.out.bold(c.header)),
    style: { head: [], border: [], compact: true },
    chars: { mid: '', 'left-mid': '', 'mid-mid': '', 'right-mid': '' },
  });
  for (const row of rows) table.push(columns.map((c) => text(c.value(row))));
  io.print(table.toString());
}

/** Label/value pairs: aligned on a terminal, `label<TAB>value` lines otherwise. */
export function printFields(io: IO, fields: readonly (readonly [string, Cell])[]): void {
  const width = Math.max(...fields.map(([label]) => label.length));
  for (const [label, value] of fields) {
    io.print(io.stdoutIsTTY ? `${io.out.bold(label.padEnd(width))}  ${text(value)}` : `${label}\t${field(value)}`);
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
