/** Numbered migrations, applied in order at start; never edit one that has shipped, add the next. */
export const migrations: { version: number; name: string; sql: string }[] = [
  {
    version: 1,
    name: 'foundation',
    sql: `
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);

CREATE TABLE users (
  id TEXT PRIMARY KEY,
  email TEXT NOT NULL UNIQUE COLLATE NOCASE,
  name TEXT,
  locale TEXT,
  password_hash TEXT NOT NULL,
  email_verified_at INTEGER,
  created_at INTEGER NOT NULL
);

CREATE TABLE workspaces (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  slug TEXT NOT NULL UNIQUE,
  status TEXT NOT NULL CHECK (status IN ('active','suspended','closed')),
  pinned_version TEXT NOT NULL,
  created_at INTEGER NOT NULL
);

CREATE TABLE memberships (
  user_id TEXT NOT NULL REFERENCES users(id),
  workspace_id TEXT NOT NULL REFERENCES workspaces(id),
  role TEXT NOT NULL CHECK (role IN ('owner','admin','member')),
  created_at INTEGER NOT NULL,
  PRIMARY KEY (user_id, workspace_id)
);
CREATE INDEX memberships_ws ON memberships(workspace_id);

CREATE TABLE invites (
  id TEXT PRIMARY KEY,
  code_hash TEXT NOT NULL UNIQUE,
  max_uses INTEGER NOT NULL,
  uses INTEGER NOT NULL DEFAULT 0,
  expires_at INTEGER,
  created_at INTEGER NOT NULL
);

CREATE TABLE refresh_tokens (
  id TEXT PRIMARY KEY,
  token_hash TEXT NOT NULL UNIQUE,
  family_id TEXT NOT NULL,
  user_id TEXT NOT NULL REFERENCES users(id),
  workspace_id TEXT,
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  used_at INTEGER,
  revoked_at INTEGER
);
CREATE INDEX refresh_tokens_family ON refresh_tokens(family_id);
CREATE INDEX refresh_tokens_user ON refresh_tokens(user_id);

CREATE TABLE verification_tokens (
  token_hash TEXT PRIMARY KEY,
  user_id TEXT NOT NULL REFERENCES users(id),
  email TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  used_at INTEGER
);

CREATE TABLE rate_events (
  bucket TEXT NOT NULL,
  at INTEGER NOT NULL
);
CREATE INDEX rate_events_bucket ON rate_events(bucket, at);

CREATE TABLE domains (
  id TEXT PRIMARY KEY,
  workspace_id TEXT NOT NULL REFERENCES workspaces(id),
  name TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('pending','verified','failed','degraded','disabled')),
  purpose TEXT NOT NULL,
  mail_from_subdomain TEXT NOT NULL,
  tracking_host TEXT,
  ownership_token TEXT NOT NULL,
  dkim_selector TEXT NOT NULL,
  dkim_public_key TEXT NOT NULL,
  dkim_private_key TEXT NOT NULL,
  records TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  status_since INTEGER NOT NULL,
  verified_at INTEGER,
  last_checked_at INTEGER,
  check_generation INTEGER NOT NULL DEFAULT 0,
  deleted_at INTEGER
);
CREATE UNIQUE INDEX domains_name ON domains(workspace_id, name) WHERE deleted_at IS NULL;
CREATE INDEX domains_ws ON domains(workspace_id, created_at);

-- The sandbox DNS zone (--dns sandbox): what a resolver would answer.
CREATE TABLE dns_zone (
  host TEXT NOT NULL COLLATE NOCASE,
  type TEXT NOT NULL,
  vals TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('visible','propagating')),
  PRIMARY KEY (host, type)
);

-- The events outbox: written in the transaction of the change that raised them.
CREATE TABLE events (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  workspace_id TEXT NOT NULL,
  type TEXT NOT NULL,
  message_id TEXT,
  data TEXT NOT NULL,
  api_version TEXT NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE INDEX events_ws ON events(workspace_id, seq);
CREATE INDEX events_message ON events(message_id, seq) WHERE message_id IS NOT NULL;

CREATE TABLE messages (
  id TEXT PRIMARY KEY,
  workspace_id TEXT NOT NULL REFERENCES workspaces(id),
  key_id TEXT NOT NULL,
  mode TEXT NOT NULL CHECK (mode IN ('live','test')),
  domain_id TEXT NOT NULL,
  status TEXT NOT NULL,
  from_header TEXT NOT NULL,
  from_email TEXT NOT NULL,
  to_addrs TEXT NOT NULL,
  cc_addrs TEXT NOT NULL,
  bcc_addrs TEXT NOT NULL,
  reply_to TEXT NOT NULL,
  subject TEXT NOT NULL,
  html TEXT,
  text TEXT,
  attachments TEXT NOT NULL,
  headers TEXT NOT NULL,
  tags TEXT NOT NULL,
  tracking TEXT NOT NULL,
  scheduled_at INTEGER,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE INDEX messages_domain_waiting ON messages(domain_id) WHERE status IN ('queued','scheduled');

CREATE TABLE idempotency_keys (
  workspace_id TEXT NOT NULL,
  key TEXT NOT NULL,
  request_hash TEXT NOT NULL,
  status INTEGER NOT NULL,
  body TEXT NOT NULL,
  headers TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (workspace_id, key)
);

CREATE TABLE suppressions (
  workspace_id TEXT NOT NULL,
  email TEXT NOT NULL COLLATE NOCASE,
  reason TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (workspace_id, email)
);

CREATE TABLE api_keys (
  id TEXT PRIMARY KEY,
  workspace_id TEXT NOT NULL REFERENCES workspaces(id),
  name TEXT NOT NULL,
  prefix TEXT NOT NULL,
  last4 TEXT NOT NULL,
  key_hash TEXT NOT NULL UNIQUE,
  mode TEXT NOT NULL CHECK (mode IN ('live','test')),
  scopes TEXT NOT NULL,
  domain_id TEXT REFERENCES domains(id),
  ip_allowlist TEXT NOT NULL DEFAULT '[]',
  created_by TEXT,
  created_at INTEGER NOT NULL,
  last_used_at INTEGER,
  expires_at INTEGER,
  revoked_at INTEGER
);
CREATE INDEX api_keys_ws ON api_keys(workspace_id, created_at);

CREATE TABLE jobs (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  kind TEXT NOT NULL,
  payload TEXT NOT NULL,
  run_at INTEGER NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0,
  claimed_until INTEGER,
  created_at INTEGER NOT NULL
);
CREATE INDEX jobs_due ON jobs(run_at);

CREATE TABLE sink_messages (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  message_id_header TEXT,
  svc_message_id TEXT,
  -- 1 for mail the service itself sent (a /v1 message or its own mail): a second copy is ignored.
  from_service INTEGER NOT NULL DEFAULT 0,
  workspace_id TEXT,
  mail_from TEXT,
  rcpt_to TEXT NOT NULL,
  from_addr TEXT,
  to_addrs TEXT NOT NULL,
  cc_addrs TEXT NOT NULL,
  subject TEXT,
  text TEXT,
  html TEXT,
  headers TEXT NOT NULL,
  -- text, html and attachments are parsed from raw when the message is first read (parsed = 1 after).
  parsed INTEGER NOT NULL DEFAULT 0,
  attachments TEXT NOT NULL,
  dkim TEXT NOT NULL,
  size INTEGER NOT NULL,
  raw BLOB NOT NULL,
  received_at INTEGER NOT NULL
);
CREATE INDEX sink_messages_msgid ON sink_messages(message_id_header);
`,
  },
  {
    version: 2,
    name: 'webhooks',
    sql: `
-- Each job belongs to a queue with a scheduler of its own: 'default', or one per webhook endpoint
-- ('webhook:<endpoint id>'), so a receiver that hangs holds up only its own deliveries.
ALTER TABLE jobs ADD COLUMN queue TEXT NOT NULL DEFAULT 'default';
DROP INDEX jobs_due;
CREATE INDEX jobs_queue_due ON jobs(queue, run_at);

CREATE TABLE webhook_endpoints (
  id TEXT PRIMARY KEY,
  workspace_id TEXT NOT NULL REFERENCES workspaces(id),
  url TEXT NOT NULL,
  -- JSON array of event types, or NULL for every type.
  events TEXT,
  secret TEXT NOT NULL,
  -- The secret before the last rotation: it signs beside the new one until previous_secret_expires_at.
  previous_secret TEXT,
  previous_secret_expires_at INTEGER,
  status TEXT NOT NULL CHECK (status IN ('active','disabled_by_failures')),
  created_at INTEGER NOT NULL,
  disabled_at INTEGER,
  last_success_at INTEGER
);
CREATE INDEX webhook_endpoints_ws ON webhook_endpoints(workspace_id, created_at);

-- A delivery of an event to an endpoint is a 'webhook' job (its payload carries the attempt number and the first
-- attempt's time; a redelivery is another job); every attempt it makes is a row here.
CREATE TABLE webhook_attempts (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  -- The delivery's job id: the same for all its attempts.
  delivery_id INTEGER NOT NULL,
  endpoint_id TEXT NOT NULL,
  event_id TEXT NOT NULL,
  event_type TEXT NOT NULL,
  attempt INTEGER NOT NULL,
  at INTEGER NOT NULL,
  status_code INTEGER,
  error TEXT,
  duration_ms INTEGER NOT NULL,
  ok INTEGER NOT NULL
);
CREATE INDEX webhook_attempts_endpoint ON webhook_attempts(endpoint_id, id);
CREATE INDEX webhook_attempts_event ON webhook_attempts(event_id, id);
`,
  },
  {
    version: 3,
    name: 'inbox',
    sql: `
-- Filled when a message is caught (inbound/body-text.ts): the listing's preview line and attachment marker.
ALTER TABLE sink_messages ADD COLUMN preview TEXT;
ALTER TABLE sink_messages ADD COLUMN has_attachments INTEGER NOT NULL DEFAULT 0;
-- Service-clock time the message was marked read; null while unread.
ALTER TABLE sink_messages ADD COLUMN read_at INTEGER;
CREATE INDEX sink_messages_ws ON sink_messages(workspace_id, seq) WHERE workspace_id IS NOT NULL;

-- The inbox's search: one row per caught message, rowid = sink_messages.seq. Contentless: the index only, the
-- text itself is not stored a second time.
CREATE VIRTUAL TABLE sink_search USING fts5(
  subject, sender, recipients, body,
  content = '', contentless_delete = 1, tokenize = 'unicode61 remove_diacritics 2'
);
-- Mail caught before this version: its header fields, and its body text when it was already read.
INSERT INTO sink_search (rowid, subject, sender, recipients, body)
  SELECT seq, coalesce(subject, ''), coalesce(from_addr, '') || ' ' || coalesce(mail_from, ''),
    (SELECT group_concat(value, ' ') FROM (SELECT value FROM json_each(to_addrs) UNION ALL SELECT value FROM json_each(cc_addrs)
      UNION ALL SELECT value FROM json_each(rcpt_to))),
    coalesce(text, '')
  FROM sink_messages;
UPDATE sink_messages SET preview = nullif(substr(trim(replace(replace(text, char(13), ' '), char(10), ' ')), 1, 200), ''),
  has_attachments = (attachments != '[]')
  WHERE parsed = 1;
`,
  },
  {
    version: 4,
    name: 'sink content',
    sql: `
-- A caught message's header fields, source and what is parsed from it when it is first read, apart from the columns
-- the listing reads. In one row, the listing's columns after raw (and after a large html) made SQLite walk that
-- value's overflow pages for every row listed: a page of 50 messages cost as much as their size.
CREATE TABLE sink_content (
  seq INTEGER PRIMARY KEY, -- sink_messages.seq
  parsed INTEGER NOT NULL DEFAULT 0,
  headers TEXT NOT NULL,
  text TEXT,
  html TEXT,
  attachments TEXT NOT NULL,
  raw BLOB NOT NULL
);
INSERT INTO sink_content (seq, parsed, headers, text, html, attachments, raw)
  SELECT seq, parsed, headers, text, html, attachments, raw FROM sink_messages;
ALTER TABLE sink_messages DROP COLUMN raw;
ALTER TABLE sink_messages DROP COLUMN html;
ALTER TABLE sink_messages DROP COLUMN text;
ALTER TABLE sink_messages DROP COLUMN attachments;
ALTER TABLE sink_messages DROP COLUMN headers;
ALTER TABLE sink_messages DROP COLUMN parsed;
`,
  },
  {
    version: 5,
    name: 'attachment chunks',
    sql: `
-- The bytes of a message's attachments, decoded, apart from its row and in pieces of about 1 MiB. As base64 inside
-- messages.attachments, every status change rewrote all of them with the row (a 35 MB message copied 35 MB at each
-- of its steps to delivered), and storing or reading one held the whole of it two or three times over in SQLite and
-- its binding; a piece at a time, only a piece is. Messages stored before keep their content in the JSON.
CREATE TABLE attachment_chunks (
  message_id TEXT NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
  attachment INTEGER NOT NULL, -- its index in messages.attachments
  chunk INTEGER NOT NULL,
  bytes BLOB NOT NULL,
  PRIMARY KEY (message_id, attachment, chunk)
);
`,
  },
  {
    version: 6,
    name: 'retention',
    sql: `
-- What the retention passes (store/retention.ts) walk to find what has aged out, oldest first, without a scan.
CREATE INDEX messages_created ON messages(created_at);
CREATE INDEX idempotency_keys_created ON idempotency_keys(created_at);
-- Events that belong to no message (domain.*, tenant.*): few, so a partial index costs the sends nothing.
CREATE INDEX events_unlinked ON events(created_at) WHERE message_id IS NULL;
-- A workspace's newest event of each type is kept whatever its age: it is where a caught-up listener's cursor points.
CREATE INDEX events_ws_type ON events(workspace_id, type, seq);
`,
  },
  {
    version: 7,
    name: 'sink message-id index',
    sql: `
-- A caught message is looked up by its Message-ID only to keep one copy of the service's own mail: the index holds
-- those alone. Mail from other programs (any Message-ID, in no order) no longer adds a random page to every commit.
DROP INDEX sink_messages_msgid;
CREATE INDEX sink_messages_service_msgid ON sink_messages(message_id_header) WHERE from_service = 1;
`,
  },
  {
    version: 8,
    name: 'claims and tags',
    sql: `
-- The service time a wait for mail (svc inbox wait, inbox.waitFor, wait_for_message) took the message; null while
-- none has. Set once, by a conditional update, so that two waits never return one message. No index: a wait lists
-- mail since a recent time, and the listing already walks the table newest first.
ALTER TABLE sink_messages ADD COLUMN claimed_at INTEGER;
-- The message's tags as the service writes them in X-Svc-Tags (name=value, the value percent-encoded), separated and
-- surrounded by ';' (';plan=pro;team=ops;'), for the search's tag: operator; null without tags. A few bytes on the
-- row of tagged mail only.
ALTER TABLE sink_messages ADD COLUMN tags TEXT;
UPDATE sink_messages SET tags = (
  SELECT nullif(';' || replace(replace(replace(json_extract(h.value, '$.value'), ' ', ''), char(9), ''), ';;', ';') || ';', ';;')
  FROM sink_content c, json_each(c.headers) h
  WHERE c.seq = sink_messages.seq AND lower(json_extract(h.value, '$.name')) = 'x-svc-tags'
  ORDER BY h.key DESC LIMIT 1
);
`,
  },
  {
    version: 9,
    name: 'message checks',
    sql: `
-- A caught message's checks (core/checks.ts): made when they are first asked for, then kept with the message. The
-- foreign key takes the report with its message whichever way that goes (one, all, retention).
CREATE TABLE sink_checks (
  seq INTEGER PRIMARY KEY REFERENCES sink_messages(seq) ON DELETE CASCADE,
  report TEXT NOT NULL
);
-- The SMTP client that handed the message to the sink: its address and the name it gave in HELO/EHLO, which SPF
-- judges a message by. Null for mail caught before this version.
ALTER TABLE sink_messages ADD COLUMN client_ip TEXT;
ALTER TABLE sink_messages ADD COLUMN helo TEXT;
`,
  },
  {
    version: 10,
    name: 'raw source in pieces',
    sql: `
-- A caught message's raw source past its first MiB, a MiB a piece, in order (store/inbox.ts): written a piece at a time,
-- a big message costs SQLite a MiB of copies at once instead of twice its size. Mail caught before this version has
-- its whole source in sink_content.raw and no pieces. The foreign key takes the pieces with their message.
CREATE TABLE sink_raw_pieces (
  seq INTEGER NOT NULL REFERENCES sink_messages(seq) ON DELETE CASCADE,
  n INTEGER NOT NULL,
  bytes BLOB NOT NULL,
  PRIMARY KEY (seq, n)
);
`,
  },
  {
    version: 11,
    name: 'long text and HTML in pieces',
    sql: `
-- A send's text or HTML over a MiB as the API read it (its UTF-8 bytes) past its first MiB, a MiB a piece, each cut
-- where a character begins, in order (store/emails.ts): stored a piece at a time, a big text costs SQLite a MiB of
-- copies at once instead of twice its size. The first MiB stays in messages.text or messages.html. The foreign key
-- takes the pieces with their message.
CREATE TABLE message_text_pieces (
  message_id TEXT NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
  part TEXT NOT NULL CHECK (part IN ('text', 'html')),
  n INTEGER NOT NULL,
  bytes BLOB NOT NULL,
  PRIMARY KEY (message_id, part, n)
);
`,
  },
  {
    version: 12,
    name: 'job due times on a clock that does not step',
    sql: `
-- A job's run_at and set_at (when run_at was set) are on the service clock's monotonic reading, which a step of the
-- wall clock does not move; or, with fixed = 1, run_at is an instant on the service clock that the sender chose (a
-- scheduled send). A start makes a delay set at a time later than its own the same delay from now (store/jobs.ts).
ALTER TABLE jobs RENAME COLUMN created_at TO set_at;
ALTER TABLE jobs ADD COLUMN fixed INTEGER NOT NULL DEFAULT 0;
UPDATE jobs SET fixed = 1
WHERE kind = 'deliver' AND json_extract(payload, '$.message_id') IN (SELECT id FROM messages WHERE status = 'scheduled');
DROP INDEX jobs_queue_due;
CREATE INDEX jobs_queue_due ON jobs(queue, fixed, run_at);
`,
  },
  {
    version: 13,
    name: 'releases and relays of caught mail',
    sql: `
-- What the relay did with a caught message (store/relays.ts): a release, a relay rule's attempt deferred, refused or
-- done, in order, shown on the message's timeline. The foreign key takes them with their message.
CREATE TABLE sink_relays (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  seq INTEGER NOT NULL REFERENCES sink_messages(seq) ON DELETE CASCADE,
  type TEXT NOT NULL,
  at INTEGER NOT NULL,
  detail TEXT NOT NULL
);
CREATE INDEX sink_relays_seq ON sink_relays(seq, id);
`,
  },
  {
    version: 14,
    name: 'metric counts',
    sql: `
-- The counters GET /metrics reports (store/metrics.ts), kept by triggers in the transaction of the write they count, so
-- that a scrape reads a row per counter and workspace instead of counting the tables, and a count survives a restart
-- and retention's deletes (which no trigger counts). workspace_id '' is mail caught outside any workspace. A migration
-- that rebuilds one of these tables must create its triggers again.
CREATE TABLE metric_counts (
  name TEXT NOT NULL,
  workspace_id TEXT NOT NULL,
  n INTEGER NOT NULL,
  PRIMARY KEY (name, workspace_id)
) WITHOUT ROWID;

CREATE TRIGGER metric_accepted AFTER INSERT ON messages BEGIN
  INSERT INTO metric_counts (name, workspace_id, n) VALUES ('accepted', NEW.workspace_id, 1)
  ON CONFLICT (name, workspace_id) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER metric_status AFTER UPDATE OF status ON messages
WHEN NEW.status <> OLD.status AND NEW.status IN ('delivered', 'bounced', 'failed') BEGIN
  INSERT INTO metric_counts (name, workspace_id, n) VALUES (NEW.status, NEW.workspace_id, 1)
  ON CONFLICT (name, workspace_id) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER metric_caught AFTER INSERT ON sink_messages BEGIN
  INSERT INTO metric_counts (name, workspace_id, n) VALUES ('caught', coalesce(NEW.workspace_id, ''), 1)
  ON CONFLICT (name, workspace_id) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER metric_webhook_attempt AFTER INSERT ON webhook_attempts BEGIN
  INSERT INTO metric_counts (name, workspace_id, n)
  VALUES ('webhook_attempts', coalesce((SELECT workspace_id FROM webhook_endpoints WHERE id = NEW.endpoint_id), ''), 1)
  ON CONFLICT (name, workspace_id) DO UPDATE SET n = n + 1;
  INSERT INTO metric_counts (name, workspace_id, n)
  SELECT 'webhook_failures', coalesce((SELECT workspace_id FROM webhook_endpoints WHERE id = NEW.endpoint_id), ''), 1
  WHERE NEW.ok = 0
  ON CONFLICT (name, workspace_id) DO UPDATE SET n = n + 1;
END;

-- What a database made before this version already holds, counted once from its rows (a message's earlier statuses
-- are not known: one delivered and later complained counts as neither).
INSERT INTO metric_counts (name, workspace_id, n) SELECT 'accepted', workspace_id, COUNT(*) FROM messages GROUP BY workspace_id;
INSERT INTO metric_counts (name, workspace_id, n)
SELECT status, workspace_id, COUNT(*) FROM messages WHERE status IN ('delivered', 'bounced', 'failed') GROUP BY status, workspace_id;
INSERT INTO metric_counts (name, workspace_id, n)
SELECT 'caught', coalesce(workspace_id, ''), COUNT(*) FROM sink_messages GROUP BY coalesce(workspace_id, '');
INSERT INTO metric_counts (name, workspace_id, n)
SELECT 'webhook_attempts', coalesce(e.workspace_id, ''), COUNT(*) FROM webhook_attempts a
LEFT JOIN webhook_endpoints e ON e.id = a.endpoint_id GROUP BY coalesce(e.workspace_id, '');
INSERT INTO metric_counts (name, workspace_id, n)
SELECT 'webhook_failures', coalesce(e.workspace_id, ''), COUNT(*) FROM webhook_attempts a
LEFT JOIN webhook_endpoints e ON e.id = a.endpoint_id WHERE a.ok = 0 GROUP BY coalesce(e.workspace_id, '');
`,
  },
  {
    version: 15,
    name: 'job lanes',
    sql: `
-- A job's lane is whose turn it takes (store/jobs.ts): due jobs are claimed round-robin across a queue's lanes, so
-- a workspace's mail waits behind its own backlog and a bounded share of others', never behind all of another's.
-- A message's jobs (its delivery, its simulated outcome) take its workspace's lane; every other job, none ('').
ALTER TABLE jobs ADD COLUMN lane TEXT NOT NULL DEFAULT '';
UPDATE jobs SET lane = coalesce((SELECT workspace_id FROM messages WHERE id = json_extract(jobs.payload, '$.message_id')), '')
WHERE kind IN ('deliver', 'outcome');
DROP INDEX jobs_queue_due;
CREATE INDEX jobs_queue_due ON jobs(queue, fixed, lane, run_at);
`,
  },
  {
    version: 16,
    name: 'caught mail by recipient',
    sql: `
-- Every address a caught message went to (envelope recipients, To and Cc), in ASCII lower case as the listing's "to"
-- compares them (store/inbox.ts): a wait's listing of the mail to one address reads that address's rows, not every
-- message since its "since" (a sink of 10,000 messages made each wait's listing 4.5 ms). The foreign key takes them
-- with their message.
CREATE TABLE sink_recipients (
  address TEXT NOT NULL,
  seq INTEGER NOT NULL REFERENCES sink_messages(seq) ON DELETE CASCADE,
  PRIMARY KEY (address, seq)
) WITHOUT ROWID;
CREATE INDEX sink_recipients_seq ON sink_recipients(seq);
INSERT OR IGNORE INTO sink_recipients (address, seq)
SELECT lower(a.value), s.seq FROM sink_messages s, json_each(s.rcpt_to) a
UNION SELECT lower(a.value), s.seq FROM sink_messages s, json_each(s.to_addrs) a
UNION SELECT lower(a.value), s.seq FROM sink_messages s, json_each(s.cc_addrs) a;
`,
  },
];
