import type { DomainPurpose, Finding, RecordKind } from '../../contract/domains.js';
import type { Db } from './db.js';
import { newestFirst } from './page.js';

/** A record the customer must (or should) publish, as kept with its domain (core/rules/domain-records.ts makes the set). */
export interface ExpectedRecord {
  kind: RecordKind;
  type: 'TXT' | 'CNAME' | 'MX';
  host: string;
  value: string;
  priority?: number;
  required: boolean;
}

/** A domain's expected records, and the findings of its last check (in the same order; null before one). */
export interface StoredRecords {
  expected: ExpectedRecord[];
  findings: Finding[] | null;
}

/** A domain as the store hands it out and takes it: its row, with the JSON columns decoded. */
export interface DomainRow {
  id: string;
  workspace_id: string;
  name: string;
  status: 'pending' | 'verified' | 'failed' | 'degraded' | 'disabled';
  purpose: DomainPurpose[];
  mail_from_subdomain: string;
  tracking_host: string | null;
  ownership_token: string;
  dkim_selector: string;
  dkim_public_key: string;
  dkim_private_key: string;
  records: StoredRecords;
  created_at: number;
  status_since: number;
  verified_at: number | null;
  last_checked_at: number | null;
  check_generation: number;
  deleted_at: number | null;
}

/** The table's row: `purpose` and `records` are JSON text. */
type Stored = Omit<DomainRow, 'purpose' | 'records'> & { purpose: string; records: string };

function decode(r: Stored): DomainRow;
function decode(r: Stored | undefined): DomainRow | undefined;
function decode(r: Stored | undefined): DomainRow | undefined {
  return r && { ...r, purpose: JSON.parse(r.purpose), records: JSON.parse(r.records) };
}

/** Columns to write, the JSON ones encoded. */
function encode(fields: Partial<DomainRow>): Partial<Stored> {
  const { purpose, records, ...rest } = fields;
  return {
    ...rest,
    ...(purpose !== undefined && { purpose: JSON.stringify(purpose) }),
    ...(records !== undefined && { records: JSON.stringify(records) }),
  };
}

interface ZoneRow {
  host: string;
  type: string;
  vals: string;
  state: 'visible' | 'propagating';
}

/** A record of the sandbox zone: a host's values of one type. */
export interface ZoneRecord {
  host: string;
  type: string;
  values: string[];
  state: ZoneRow['state'];
}

export function createDomainStore(db: Db) {
  return {
    insert(d: DomainRow): void {
      db.prepare(
        `INSERT INTO domains (id, workspace_id, name, status, purpose, mail_from_subdomain, tracking_host, ownership_token,
           dkim_selector, dkim_public_key, dkim_private_key, records, created_at, status_since, verified_at, last_checked_at,
           check_generation, deleted_at)
         VALUES (@id, @workspace_id, @name, @status, @purpose, @mail_from_subdomain, @tracking_host, @ownership_token,
           @dkim_selector, @dkim_public_key, @dkim_private_key, @records, @created_at, @status_since, @verified_at,
           @last_checked_at, @check_generation, @deleted_at)`,
      ).run(encode(d));
    },
    /** A live domain of the workspace (another tenant's or a deleted one is not found). */
    byId: (workspaceId: string, id: string) =>
      decode(
        db
          .prepare('SELECT * FROM domains WHERE id = ? AND workspace_id = ? AND deleted_at IS NULL')
          .get(id, workspaceId) as Stored | undefined,
      ),
    /** Any live domain by id, for workers. */
    get: (id: string) =>
      decode(db.prepare('SELECT * FROM domains WHERE id = ? AND deleted_at IS NULL').get(id) as Stored | undefined),
    /** What delivery needs of a domain (not its key material or record set). */
    sendingInfo: (id: string) =>
      db.prepare('SELECT name, mail_from_subdomain, tracking_host FROM domains WHERE id = ?').get(id) as
        | Pick<DomainRow, 'name' | 'mail_from_subdomain' | 'tracking_host'>
        | undefined,
    /** A live domain's id and status by name (what sending checks). */
    statusByName: (workspaceId: string, name: string) =>
      db
        .prepare('SELECT id, status FROM domains WHERE workspace_id = ? AND name = ? AND deleted_at IS NULL')
        .get(workspaceId, name) as Pick<DomainRow, 'id' | 'status'> | undefined,
    byName: (workspaceId: string, name: string) =>
      decode(
        db
          .prepare('SELECT * FROM domains WHERE workspace_id = ? AND name = ? AND deleted_at IS NULL')
          .get(workspaceId, name) as Stored | undefined,
      ),
    list(workspaceId: string, limit: number, after?: string) {
      const page = newestFirst<Stored>(db, 'domains', { workspaceId, where: 'deleted_at IS NULL', limit, after });
      return page && { rows: page.rows.map((r) => decode(r)), hasMore: page.hasMore };
    },
    /** Writes the changed columns of a domain. */
    update(id: string, fields: Partial<Omit<DomainRow, 'id' | 'workspace_id'>>): void {
      const columns = encode(fields);
      const keys = Object.keys(columns);
      if (!keys.length) return;
      db.prepare(`UPDATE domains SET ${keys.map((k) => `${k} = @${k}`).join(', ')} WHERE id = @id`).run({
        ...columns,
        id,
      });
    },
    softDelete(id: string, at: number): void {
      db.prepare('UPDATE domains SET deleted_at = ? WHERE id = ?').run(at, id);
    },
    activeKeysRestrictedTo(domainId: string, now: number): number {
      return (
        db
          .prepare(
            'SELECT COUNT(*) AS n FROM api_keys WHERE domain_id = ? AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ?)',
          )
          .get(domainId, now) as { n: number }
      ).n;
    },

    zoneGet(host: string, type: string): ZoneRecord | undefined {
      const r = db.prepare('SELECT * FROM dns_zone WHERE host = ? AND type = ?').get(host.replace(/\.$/, ''), type) as
        | ZoneRow
        | undefined;
      return r && { host: r.host, type: r.type, values: JSON.parse(r.vals) as string[], state: r.state };
    },
    zonePut(host: string, type: string, values: string[], state: ZoneRecord['state']): void {
      db.prepare(
        `INSERT INTO dns_zone (host, type, vals, state) VALUES (?, ?, ?, ?)
         ON CONFLICT (host, type) DO UPDATE SET vals = excluded.vals, state = excluded.state`,
      ).run(host.replace(/\.$/, ''), type, JSON.stringify(values), state);
    },
    zoneDelete: (host: string, type: string) =>
      db.prepare('DELETE FROM dns_zone WHERE host = ? AND type = ?').run(host.replace(/\.$/, ''), type).changes,
    zoneHas: (host: string) =>
      db.prepare('SELECT 1 FROM dns_zone WHERE host = ? LIMIT 1').get(host.replace(/\.$/, '')) !== undefined,
  };
}
export type DomainStore = ReturnType<typeof createDomainStore>;
