// A wait for caught mail held by the server (inbox.wait, POST /sandbox/messages/wait): the oldest message the filters
// take that no wait took, claimed and in full; held until such a message is caught, woken by the sink's commit; a
// client that goes away takes nothing, and a server that stops ends the wait.
import { describe, expect, it } from 'vitest';
import { createChanges } from '../../lib/changes.js';
import { manualClock } from '../../lib/clock.js';
import { silentLogger } from '../../lib/log.js';
import { ingest } from '../inbound/sink.js';
import { openDb } from '../store/db.js';
import { createInboxStore } from '../store/inbox.js';
import { ServiceError } from './errors.js';
import { createInbox } from './inbox.js';

const T0 = Date.parse('2026-08-01T12:00:00Z');

function setup() {
  const clock = manualClock(T0);
  const changes = createChanges();
  const store = createInboxStore(openDb({ memory: true }).db);
  /** How many times a wait has looked for mail to take (the store's query of candidates). */
  const looks = { n: 0 };
  const candidates = store.candidates;
  store.candidates = (o) => {
    looks.n++;
    return candidates(o);
  };
  // Held waits are woken by the catch itself, not by the change signal's `sink` topic (which no one notifies here).
  const inbox = createInbox({ store, clock, changes });
  /** Catches a message with `subject`, To `to` and the envelope recipients `rcpt` (To's address by default). */
  const caught = async (subject: string, to: string, rcpt = [to]) =>
    (await ingest(
      { inbox, log: silentLogger },
      Buffer.from(`From: a@example.net\r\nTo: ${to}\r\nSubject: ${subject}\r\n\r\nBody of ${subject}\r\n`),
      { mailFrom: 'a@example.net', rcptTo: rcpt },
    ))!;
  return { clock, changes, inbox, caught, looks };
}

/** Whether a promise has settled by the next turn of the event loop (a wait woken at once has, when it takes nothing). */
async function settled(p: Promise<unknown>): Promise<boolean> {
  let done = false;
  void p.then(
    () => (done = true),
    () => (done = true),
  );
  await new Promise((r) => setImmediate(r));
  return done;
}

describe('inbox.wait', () => {
  it('takes the oldest unclaimed message the filters take, claimed and in full, then the next; none: null', async () => {
    const { clock, inbox, caught } = setup();
    const early = await caught('Your code', 'ada@example.org');
    clock.advance(1_000);
    const since = new Date(clock.now()).toISOString();
    const first = await caught('Your CODE again', 'other@example.org', ['ADA@example.org']);
    await caught('A newsletter', 'ada@example.org');
    const second = await caught('Last code', 'ada@example.org');

    const q = { to: 'Ada@Example.org', subject: 'code', since };
    const a = await inbox.wait(q);
    // A Bcc (an envelope recipient alone) is to the address, in any case; the message before `since` is not taken.
    expect(a).toMatchObject({
      stopping: false,
      message: { id: first, claimed: true, text: 'Body of Your CODE again\n' },
    });
    expect(a.message).toEqual(await inbox.get(first));
    expect((await inbox.wait(q)).message?.id).toBe(second);
    expect(await inbox.wait(q)).toEqual({ message: null, stopping: false });
    expect(inbox.list({ claimed: 'false' }).data.map((m) => m.subject)).toEqual(['A newsletter', 'Your code']);
    expect((await inbox.wait({ to: 'ada@example.org' })).message?.id).toBe(early);
  });

  it('with claim: false shows a message without claiming it, and goes on after one passed over, deleted or not', async () => {
    const { inbox, caught } = setup();
    const [m1, m2, m3] = [
      await caught('one', 'bo@example.org'),
      await caught('two', 'bo@example.org'),
      await caught('three', 'bo@example.org'),
    ];
    const shown = await inbox.wait({ to: 'bo@example.org', claim: false });
    expect(shown.message).toMatchObject({ id: m1, claimed: false });
    expect((await inbox.wait({ to: 'bo@example.org', claim: false, after: m1 })).message?.id).toBe(m2);
    inbox.remove(m2);
    expect((await inbox.wait({ to: 'bo@example.org', claim: false, after: m2 })).message?.id).toBe(m3);
    expect((await inbox.wait({ to: 'bo@example.org', claim: false, after: m3 })).message).toBeNull();
    expect(inbox.list({ claimed: 'true' }).data).toEqual([]);
  });

  it('is held until a message it takes is caught, woken by the catch, not by other mail, and answered first', async () => {
    const { inbox, caught } = setup();
    const waiting = inbox.wait({ to: 'cy@example.org', wait: 60 });
    expect(await settled(waiting)).toBe(false);
    await caught('not for cy', 'dee@example.org');
    expect(await settled(waiting)).toBe(false);
    const id = await caught('for cy', 'cy@example.org');
    // Read for the wait before the sink answers the sender.
    expect(await settled(waiting)).toBe(true);
    expect(await waiting).toMatchObject({ stopping: false, message: { id, claimed: true, subject: 'for cy' } });
  });

  it('is not woken by mail it cannot take: fifty held waits look once each while other mail is caught', async () => {
    const { inbox, caught, looks, changes } = setup();
    const waits = Array.from({ length: 50 }, (_, i) => inbox.wait({ to: `held-${i}@example.org`, wait: 60 }));
    await new Promise((r) => setImmediate(r));
    expect(looks.n).toBe(50);
    for (let i = 0; i < 20; i++) await caught(`other ${i}`, `other-${i}@example.org`);
    await new Promise((r) => setImmediate(r));
    expect(looks.n).toBe(50);
    // One of them is woken by its message, and looks once more.
    await caught('for 7', 'HELD-7@example.org');
    expect((await waits[7])?.message?.subject).toBe('for 7');
    expect(looks.n).toBe(51);
    changes.close();
    await Promise.all(waits);
  });

  it('takes nothing for a client that went away, and answers a held wait at once when the server stops', async () => {
    const { inbox, caught, changes } = setup();
    const gone = new AbortController();
    const waiting = inbox.wait({ to: 'eve@example.org', wait: 60 }, gone.signal);
    gone.abort();
    expect(await waiting).toEqual({ message: null, stopping: false });
    const id = await caught('for eve', 'eve@example.org');
    expect(inbox.list({ claimed: 'false' }).data.map((m) => m.id)).toEqual([id]);

    const held = inbox.wait({ to: 'fay@example.org', wait: 60 });
    changes.close();
    expect(await held).toEqual({ message: null, stopping: true });
  });

  it('answers 404 for a workspace no workspace has, as the listing does', async () => {
    const { inbox } = setup();
    const err = await inbox.wait({ workspace: 'Nobody' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ServiceError);
    expect((err as ServiceError).code).toBe('not_found');
  });
});
