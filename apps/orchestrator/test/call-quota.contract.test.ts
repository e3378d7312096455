import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contractBackends, type OpenedStore } from '../../../libs/contracts/test/contract-backends.ts';
import { type CallQuota, callQuota } from '../src/quotas/call-quota.ts';

/**
 * The delay a reservation answers is (place past the burst) × interval, minus the time elapsed since the
 * first reservation of the sequence; `elapsedMs` bounds the latter from the test's side.
 */
function expectDelay(delay: number, slotsPastBurst: number, intervalMs: number, elapsedMs: number): void {
  const full = Math.ceil(slotsPastBurst * intervalMs);
  expect(delay).toBeLessThanOrEqual(full);
  expect(delay).toBeGreaterThanOrEqual(Math.max(0, full - elapsedMs - 1));
}

describe.each(contractBackends)('CallQuota on $name', (backend) => {
  let opened: OpenedStore | undefined;
  let quota: CallQuota;

  beforeAll(async () => {
    opened = await backend.open();
    quota = callQuota(opened.store);
  });
  afterAll(async () => {
    await opened?.close();
  });

  it('lets a burst of perMinute calls through at once, then paces one per minute / perMinute', async () => {
    const started = Date.now();
    const delays = [];
    for (let call = 0; call < 6; call++) delays.push(await quota.reserve('team-a', 3));
    const elapsed = Date.now() - started;
    expect(delays.slice(0, 3)).toEqual([0, 0, 0]);
    expectDelay(delays[3] as number, 1, 20_000, elapsed);
    expectDelay(delays[4] as number, 2, 20_000, elapsed);
    expectDelay(delays[5] as number, 3, 20_000, elapsed);
  });

  it('keeps an interval that is not a whole number of ms', async () => {
    const started = Date.now();
    const delays = [];
    for (let call = 0; call < 9; call++) delays.push(await quota.reserve('team-sevens', 7));
    const elapsed = Date.now() - started;
    expect(delays.slice(0, 7)).toEqual([0, 0, 0, 0, 0, 0, 0]);
    expectDelay(delays[7] as number, 1, 60_000 / 7, elapsed);
    expectDelay(delays[8] as number, 2, 60_000 / 7, elapsed);
  });

  it('keeps each team’s budget apart', async () => {
    expect(await quota.reserve('team-b', 1)).toBe(0);
    expect(await quota.reserve('team-c', 1)).toBe(0);
    expect(await quota.reserve('team-b', 1)).toBeGreaterThan(59_000);
  });

  it('gives concurrent reservations distinct slots, as from several replicas', async () => {
    const replicas = [quota, callQuota(opened?.store as OpenedStore['store'])];
    const started = Date.now();
    const delays = await Promise.all(
      Array.from({ length: 12 }, (_, call) => (replicas[call % 2] as CallQuota).reserve('team-busy', 2)),
    );
    const elapsed = Date.now() - started;
    const sorted = [...delays].sort((a, b) => a - b);
    expect(sorted.slice(0, 2)).toEqual([0, 0]);
    for (let slot = 1; slot <= 10; slot++) expectDelay(sorted[slot + 1] as number, slot, 30_000, elapsed);
  });
});
