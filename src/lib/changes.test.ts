import { describe, expect, it } from 'vitest';
import { createChanges } from './changes.js';

const turn = () => new Promise((r) => setImmediate(r));

describe('changes', () => {
  it('calls a listener once after the turn in which its topic changed, however many notifies', async () => {
    const c = createChanges();
    let calls = 0;
    c.subscribe('events:ws_1', () => calls++);
    c.notify('events:ws_1');
    c.notify('events:ws_1');
    c.notify('events:ws_2');
    expect(calls).toBe(0);
    await turn();
    expect(calls).toBe(1);
  });

  it('next resolves true on a change, false when the time passes, the signal aborts or the changes close', async () => {
    const c = createChanges();
    const changed = c.next('sink', 5_000);
    c.notify('sink');
    expect(await changed).toBe(true);
    expect(await c.next('sink', 5)).toBe(false);
    const ac = new AbortController();
    const aborted = c.next('sink', 5_000, ac.signal);
    ac.abort();
    expect(await aborted).toBe(false);
    const held = c.next('sink', 60_000);
    c.close();
    expect(await held).toBe(false);
    expect(await c.next('sink', 60_000)).toBe(false);
  });

  it('an unsubscribed listener is not called', async () => {
    const c = createChanges();
    let calls = 0;
    const off = c.subscribe('t', () => calls++);
    off();
    c.notify('t');
    await turn();
    expect(calls).toBe(0);
  });
});
