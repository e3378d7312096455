import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contractBackends, type OpenedStore } from '../../../libs/contracts/test/contract-backends.ts';
import { type FairShareLines, fairShareLines } from '../src/dispatch/fair-share-lines.ts';

describe.each(contractBackends)('FairShareLines on $name', (backend) => {
  let opened: OpenedStore | undefined;
  let lines: FairShareLines;
  const later = () => Date.now() + 60_000;

  beforeAll(async () => {
    opened = await backend.open();
    lines = fairShareLines(opened.store, { now: Date.now });
  });
  afterAll(async () => {
    await opened?.close();
  });

  it('answers each call its place in its own team’s line', async () => {
    const places = [];
    for (const call of ['a1', 'a2', 'a3']) places.push(await lines.enter('search', 'alpha', call, later()));
    expect(places).toEqual([1, 2, 3]);
    // Another team, and the same team on another server, have lines of their own.
    expect(await lines.enter('search', 'beta', 'b1', later())).toBe(1);
    expect(await lines.enter('docs', 'alpha', 'd1', later())).toBe(1);
  });

  it('counts a call once however often it enters', async () => {
    expect(await lines.enter('search', 'alpha', 'a1', later())).toBe(3);
    expect(await lines.enter('search', 'alpha', 'a1', later())).toBe(3);
    expect(await lines.enter('search', 'alpha', 'a4', later())).toBe(4);
  });

  it('forgets a call that left, and leaving twice is harmless', async () => {
    await lines.leave('search', 'alpha', 'a1');
    await lines.leave('search', 'alpha', 'a1');
    await lines.leave('search', 'alpha', 'never-entered');
    expect(await lines.enter('search', 'alpha', 'a5', later())).toBe(4);
    // a1 comes back at the end of the line, not at its old place.
    expect(await lines.enter('search', 'alpha', 'a1', later())).toBe(5);
  });

  it('no longer counts calls past their start deadline', async () => {
    await lines.enter('search', 'late', 'old-1', Date.now() - 1);
    await lines.enter('search', 'late', 'old-2', Date.now() - 1_000);
    expect(await lines.enter('search', 'late', 'new', later())).toBe(1);
  });

  it('moves a call’s deadline when it enters again', async () => {
    await lines.enter('search', 'moved', 'm1', Date.now() - 1);
    expect(await lines.enter('search', 'moved', 'm2', later())).toBe(1);
    // m1 re-enters with a live deadline: it counts again (its own place takes m2 into account).
    expect(await lines.enter('search', 'moved', 'm1', later())).toBe(2);
    expect(await lines.enter('search', 'moved', 'm3', later())).toBe(3);
  });

  it('gives distinct places to calls entering one after another from several callers', async () => {
    const other = fairShareLines(opened?.store as NonNullable<typeof opened>['store'], { now: Date.now });
    const first = await lines.enter('search', 'shared', 's1', later());
    const second = await other.enter('search', 'shared', 's2', later());
    expect([first, second]).toEqual([1, 2]);
  });
});
