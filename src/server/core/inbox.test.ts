// The rules of caught mail (docs/local-server.md) on core over `:memory:`: whose a caught message is, the one copy kept
// of the service's own mail, what a `msg_…` id names (or why it names nothing yet), who a message is to, the read mark,
// and what retention keeps. Claiming for a wait: inbox-claim.test.ts.
import { afterEach, describe, expect, it } from 'vitest';
import { DAY, HOUR } from '../../lib/clock.js';
import { caughtMail as mail, memoryCore, START, type MemoryCore } from '../../../test/helpers/core.js';
import { messageIdHeader } from './rules/message-ids.js';
import type { SendInput } from './rules/send-rules.js';

let c: MemoryCore;
afterEach(() => c.close());

const send = async (over: Partial<SendInput> = {}) => {
  const input = { from: 'orders@example.test', to: ['ada@example.org'], subject: 'Hi', text: 'Hello', ...over };
  return (await c.core.emails.send(c.seed.key, input as SendInput, undefined)).body.id;
};
const ids = (q: Parameters<MemoryCore['core']['inbox']['list']>[0] = {}) =>
  c.core.inbox.list({ limit: 100, ...q }).data.map((m) => m.id);

describe("the service's own mail", () => {
  it('is filed under its sender’s workspace, named by its msg_ id, and a second copy is not kept', async () => {
    c = await memoryCore();
    const id = await send();
    const header = messageIdHeader(id, 'example.test');
    const caught = await c.core.inbox.catch(mail({ messageIdHeader: header }));
    expect(caught).toMatch(/^eml_/);
    expect(c.core.inbox.caughtId(id)).toBe(caught);
    expect(c.core.inbox.list({}).data[0]).toMatchObject({ id: caught, workspace: { id: c.seed.workspaceId } });
    // A resend after a crash: the same Message-ID again.
    expect(await c.core.inbox.catch(mail({ messageIdHeader: header }))).toBeNull();
    expect(ids()).toEqual([caught]);
  });

  it('keeps every copy of other mail, whatever its Message-ID', async () => {
    c = await memoryCore();
    const header = '<same@elsewhere.example>';
    const a = await c.core.inbox.catch(mail({ messageIdHeader: header }));
    const b = await c.core.inbox.catch(mail({ messageIdHeader: header }));
    expect(ids()).toEqual([b, a]);
    expect(c.core.inbox.list({}).data[0]!.workspace).toBeNull();
  });

  it('a msg_ id with no caught copy is a 404 that says why, from the message’s status', async () => {
    c = await memoryCore();
    const queued = await send();
    const scheduled = await send({ scheduled_at: new Date(START + HOUR).toISOString() });
    const cancelled = await send();
    c.core.emails.cancel(c.seed.workspaceId, cancelled);
    const why = (id: string) => {
      try {
        c.core.inbox.caughtId(id);
      } catch (err) {
        return err as { code: string; message: string };
      }
    };
    expect(why(queued)).toMatchObject({ code: 'not_found', message: expect.stringContaining('is queued') });
    expect(why(scheduled)).toMatchObject({ message: expect.stringContaining('is scheduled for') });
    expect(why(cancelled)).toMatchObject({ message: expect.stringContaining('was cancelled') });
    expect(why('msg_000000000000000000000000')).toMatchObject({ code: 'not_found' });
  });
});

describe('a first read', () => {
  const state = (id: string) =>
    c.db
      .prepare('SELECT c.parsed, s.dkim FROM sink_messages s JOIN sink_content c ON c.seq = s.seq WHERE s.id = ?')
      .get(id);

  it('parses the body and verifies DKIM, keeps both with the next commit, and a second read at the same time sees the same', async () => {
    c = await memoryCore();
    const id = (await c.core.inbox.catch(mail()))!;
    const [a, b] = await Promise.all([c.core.inbox.get(id), c.core.inbox.get(id)]);
    expect(a.text).toBe('Body\n');
    expect(b).toEqual(a);
    // Kept by a write that commits with the next group commit: through once a write queued after it is.
    await c.commit(() => {});
    expect(state(id)).toEqual({ parsed: 1, dkim: 'none' });
    expect(await c.core.inbox.get(id)).toEqual(a);
  });
});

describe('the listing', () => {
  it('finds mail to an address by its envelope (a Bcc), its To or its Cc, in any case', async () => {
    c = await memoryCore();
    const bcc = await c.core.inbox.catch(
      mail({ to: ['ada@example.org'], envelope: { mailFrom: null, rcptTo: ['ada@example.org', 'eve@example.org'] } }),
    );
    const cc = await c.core.inbox.catch(mail({ to: ['bob@example.org'], cc: ['Eve@Example.org'] }));
    await c.core.inbox.catch(mail({ to: ['bob@example.org'] }));
    expect(ids({ to: 'eve@example.org' })).toEqual([cc, bcc]);
  });

  it('marks a message read and unread', async () => {
    c = await memoryCore();
    const id = (await c.core.inbox.catch(mail()))!;
    expect(c.core.inbox.list({}).data[0]!.read).toBe(false);
    expect(c.core.inbox.markRead(id, true).read).toBe(true);
    expect(c.core.inbox.markRead(id, false).read).toBe(false);
    c.core.inbox.remove(id);
    expect(() => c.core.inbox.markRead(id, true)).toThrow(expect.objectContaining({ code: 'not_found' }));
  });
});

describe('retention', () => {
  it('keeps the newest --max-messages, removing the oldest in a pass', async () => {
    c = await memoryCore({ retention: { maxMessages: 3, maxAge: null } });
    const caught: string[] = [];
    for (let i = 0; i < 5; i++) {
      caught.push((await c.core.inbox.catch(mail({ subject: `n${i}` })))!);
      c.clock.advance(1000);
    }
    const pass = await c.core.retention.pass();
    expect(pass.caught).toEqual(caught.slice(0, 2));
    expect(ids()).toEqual(caught.slice(2).reverse());
  });

  it('removes mail older than --max-age once the clock passes it', async () => {
    c = await memoryCore({ retention: { maxMessages: null, maxAge: DAY } });
    const old = (await c.core.inbox.catch(mail()))!;
    c.clock.advance(12 * HOUR);
    const recent = (await c.core.inbox.catch(mail()))!;
    expect((await c.core.retention.pass()).caught).toEqual([]);
    c.clock.advance(12 * HOUR + 1);
    expect((await c.core.retention.pass()).caught).toEqual([old]);
    expect(ids()).toEqual([recent]);
  });
});
