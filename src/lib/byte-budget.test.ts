import { describe, expect, it } from 'vitest';
import { createByteBudget } from './byte-budget.js';

describe('byte budget', () => {
  it('lets takers in while they fit, the others in the order they came as bytes are given back', async () => {
    const budget = createByteBudget(100);
    const order: string[] = [];
    const give60 = await budget.take(60);
    const big = budget.take(50).then((give) => (order.push('50'), give));
    // Fits beside the 60, but came after the 50 that does not: it waits its turn.
    const small = budget.take(10).then((give) => (order.push('10'), give));
    await Promise.resolve();
    expect(order).toEqual([]);
    expect(budget.waiting).toBe(2);
    give60();
    (await big)();
    (await small)();
    expect(order).toEqual(['50', '10']);
    expect(budget.held).toBe(0);
  });

  it('lets a taker larger than the whole in once nothing is held, alone', async () => {
    const budget = createByteBudget(100);
    const give = await budget.take(30);
    let huge = false;
    const taken = budget.take(250).then((g) => ((huge = true), g));
    await Promise.resolve();
    expect(huge).toBe(false);
    give();
    const giveHuge = await taken;
    expect(budget.held).toBe(250);
    let next = false;
    const after = budget.take(1).then((g) => ((next = true), g));
    await Promise.resolve();
    expect(next).toBe(false);
    giveHuge();
    giveHuge();
    (await after)();
    expect(budget.held).toBe(0);
  });
});
