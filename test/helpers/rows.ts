// Rows written straight into a table, for tests of migrations: only the columns that matter are named.
import type Database from 'better-sqlite3';

type Row = Record<string, string | number | null>;

/** Inserts a row, filling every required column it does not name with a placeholder. */
export function insertRow(db: Database.Database, table: string, row: Row): void {
  const columns = db.pragma(`table_info(${table})`) as {
    name: string;
    notnull: number;
    dflt_value: unknown;
    pk: number;
  }[];
  const full: Row = {};
  for (const c of columns) if (c.notnull && c.dflt_value === null && !c.pk) full[c.name] = 0;
  Object.assign(full, row);
  const names = Object.keys(full);
  db.prepare(`INSERT INTO ${table} (${names.join(', ')}) VALUES (${names.map((n) => `@${n}`).join(', ')})`).run(full);
}
