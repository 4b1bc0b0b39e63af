// The counters of GET /metrics as the database keeps them (migration 14): counted from the rows a database already
// held when it upgrades, then by its triggers as rows are written — and left alone when rows are deleted.
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { migrate } from './db.js';
import { createMetricStore } from './metrics.js';
import { migrations } from './migrations.js';
import { insertRow as insert } from '../../../test/helpers/rows.js';

const counted = (db: Database.Database) =>
  Object.fromEntries(
    createMetricStore(db)
      .counts()
      .map((c) => [`${c.name} ${c.workspace_id}`, c.n]),
  );

describe('metric counts', () => {
  it('start from the rows of a database made before them, then count each write; deletes take nothing back', () => {
    const db = new Database(':memory:');
    // Rows of these tables alone: the workspaces and keys they name need not exist.
    db.pragma('foreign_keys = OFF');
    for (const m of migrations.filter((m) => m.version <= 13)) db.exec(m.sql);
    db.pragma('user_version = 13');
    insert(db, 'messages', { id: 'm1', workspace_id: 'ws_a', mode: 'test', status: 'delivered' });
    insert(db, 'messages', { id: 'm2', workspace_id: 'ws_a', mode: 'test', status: 'bounced' });
    insert(db, 'messages', { id: 'm3', workspace_id: 'ws_b', mode: 'test', status: 'queued' });
    insert(db, 'sink_messages', { id: 'eml_1', workspace_id: 'ws_a' });
    insert(db, 'sink_messages', { id: 'eml_2', workspace_id: null });
    insert(db, 'webhook_endpoints', { id: 'ep_1', workspace_id: 'ws_b', status: 'active' });
    insert(db, 'webhook_attempts', { endpoint_id: 'ep_1', ok: 0 });
    insert(db, 'webhook_attempts', { endpoint_id: 'ep_1', ok: 1 });
    migrate(db);
    expect(counted(db)).toEqual({
      'accepted ws_a': 2,
      'accepted ws_b': 1,
      'delivered ws_a': 1,
      'bounced ws_a': 1,
      'caught ws_a': 1,
      'caught ': 1,
      'webhook_attempts ws_b': 2,
      'webhook_failures ws_b': 1,
    });

    insert(db, 'messages', { id: 'm4', workspace_id: 'ws_b', mode: 'test', status: 'queued' });
    db.prepare("UPDATE messages SET status = 'sending' WHERE id = 'm3'").run();
    db.prepare("UPDATE messages SET status = 'failed' WHERE id = 'm3'").run();
    // A status written again is no second change.
    db.prepare("UPDATE messages SET status = 'failed' WHERE id = 'm3'").run();
    insert(db, 'sink_messages', { id: 'eml_3', workspace_id: 'ws_b' });
    insert(db, 'webhook_attempts', { endpoint_id: 'ep_1', ok: 0 });
    db.prepare('DELETE FROM messages').run();
    db.prepare('DELETE FROM sink_messages').run();
    db.prepare('DELETE FROM webhook_attempts').run();
    expect(counted(db)).toEqual({
      'accepted ws_a': 2,
      'accepted ws_b': 2,
      'delivered ws_a': 1,
      'bounced ws_a': 1,
      'failed ws_b': 1,
      'caught ws_a': 1,
      'caught ws_b': 1,
      'caught ': 1,
      'webhook_attempts ws_b': 3,
      'webhook_failures ws_b': 2,
    });
    db.close();
  });
});
