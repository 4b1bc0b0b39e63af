// Claiming caught mail for a wait: one conditional update, so a message goes to exactly one wait — the second claim of
// one connection, and a claim through another connection to the same database, are told it was taken. Either way the
// answer has the message in full, as a read gives it.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { manualClock } from '../../lib/clock.js';
import { silentLogger } from '../../lib/log.js';
import { ingest } from '../inbound/sink.js';
import { openDb } from '../store/db.js';
import { createInboxStore } from '../store/inbox.js';
import { ServiceError } from './errors.js';
import { createInbox } from './inbox.js';

const mail = (n: number) =>
  Buffer.from(`From: a@example.net\r\nTo: b@example.org\r\nSubject: Message ${n}\r\n\r\nBody ${n}\r\n`);
const catchOne = async (inbox: ReturnType<typeof createInbox>, n: number) =>
  (await ingest({ inbox, log: silentLogger }, mail(n), { mailFrom: 'a@example.net', rcptTo: ['b@example.org'] }))!;

describe('inbox.claim', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  it('takes a message once: the second claim is told it was taken; the listing filters and shows the mark', async () => {
    const clock = manualClock(Date.parse('2026-08-01T12:00:00Z'));
    const inbox = createInbox({ store: createInboxStore(openDb({ memory: true }).db), clock });
    const first = await catchOne(inbox, 1);
    const second = await catchOne(inbox, 2);

    expect(inbox.list({ claimed: 'false' }).data.map((m) => m.id)).toEqual([second, first]);
    const won = await inbox.claim(first);
    expect(won).toMatchObject({ taken: true, message: { id: first, claimed: true, text: 'Body 1\n' } });
    expect(won.message).toEqual({ ...(await inbox.get(first)) });
    expect(await inbox.claim(first)).toMatchObject({ taken: false, message: { id: first, claimed: true } });
    expect(inbox.list({ claimed: 'false' }).data.map((m) => m.id)).toEqual([second]);
    expect(inbox.list({ claimed: 'true' }).data.map((m) => m.id)).toEqual([first]);
    expect(inbox.list({}).data.map((m) => [m.id, m.claimed])).toEqual([
      [second, false],
      [first, true],
    ]);

    const unknown = await inbox.claim('eml_000000000000000000000000').catch((err: unknown) => err);
    expect(unknown).toBeInstanceOf(ServiceError);
    expect((unknown as ServiceError).code).toBe('not_found');
  });

  it('through two connections to one database, each message goes to exactly one of them', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-claim-'));
    dirs.push(dir);
    const clock = manualClock();
    const a = createInbox({ store: createInboxStore(openDb({ dataDir: dir }).db), clock });
    const b = createInbox({ store: createInboxStore(openDb({ dataDir: dir }).db), clock });
    const ids: string[] = [];
    for (let n = 0; n < 50; n++) ids.push(await catchOne(n % 2 ? a : b, n));

    // Interleaved: for each message one connection claims first, in no fixed order, then the other.
    const wins = { a: 0, b: 0 };
    for (const [n, id] of ids.entries()) {
      const [one, other] = n % 3 ? ([a, b] as const) : ([b, a] as const);
      const firstTook = (await one.claim(id)).taken;
      const secondTook = (await other.claim(id)).taken;
      expect([firstTook, secondTook]).toEqual([true, false]);
      wins[one === a ? 'a' : 'b']++;
    }
    expect(wins.a + wins.b).toBe(50);
    expect(a.list({ claimed: 'false' }).data).toEqual([]);
    expect(b.list({ claimed: 'true', limit: 100 }).data).toHaveLength(50);
  });
});
