import { describe, expect, it } from 'vitest';
import { contactVerdict, LockWatchdog } from '../src/execution/lock-watchdog.ts';

const LOCK_MS = 3_000;
const EVERY_MS = LOCK_MS / 6;

/** A watchdog on a hand-moved clock whose probes the test answers (or leaves hanging: a partition). */
function rig() {
  let now = 0;
  const probes: Array<{ sentAt: number; answer: () => void; fail: (error: Error) => void }> = [];
  const events: Array<{ event: 'lost' | 'restored'; at: number; silentMs: number }> = [];
  const watchdog = new LockWatchdog({
    lockDurationMs: LOCK_MS,
    monotonic: () => now,
    probe: () =>
      new Promise<unknown>((resolve, reject) => {
        probes.push({ sentAt: now, answer: () => resolve(1), fail: reject });
      }),
    onLost: (silentMs) => events.push({ event: 'lost', at: now, silentMs }),
    onRestored: (silentMs) => events.push({ event: 'restored', at: now, silentMs }),
  });
  const settle = () => new Promise((resolve) => setImmediate(resolve));
  return {
    watchdog,
    probes,
    events,
    settle,
    /** Moves time on without a tick (a frozen process). */
    advance(ms: number) {
      now += ms;
    },
    /** Moves time on in tick steps, answering every new probe when `answering`. */
    async run(ms: number, answering: boolean) {
      for (let elapsed = 0; elapsed < ms; elapsed += EVERY_MS) {
        now += EVERY_MS;
        watchdog.tick();
        if (answering) for (const probe of probes.splice(0)) probe.answer();
        await settle();
      }
    },
  };
}

describe('contactVerdict', () => {
  it('is lost once a whole lock duration has passed since the last answered probe was sent', () => {
    expect(contactVerdict(1_000, 1_000 + LOCK_MS - 1, LOCK_MS)).toBe('ok');
    expect(contactVerdict(1_000, 1_000 + LOCK_MS, LOCK_MS)).toBe('lost');
  });
});

describe('LockWatchdog', () => {
  it('stays quiet while Redis answers', async () => {
    const test = rig();
    test.watchdog.start();
    await test.run(LOCK_MS * 5, true);
    expect(test.events).toEqual([]);
    expect(test.watchdog.isLost).toBe(false);
  });

  it('declares the locks lost within a lock duration (+ one tick) of the last contact, then restores', async () => {
    const test = rig();
    test.watchdog.start();
    for (const probe of test.probes.splice(0)) probe.answer();
    await test.run(EVERY_MS * 4, true);
    const lastAnsweredSentAt = 4 * EVERY_MS;
    // The partition: probes hang, and only one is out at a time (until it is given up on).
    await test.run(LOCK_MS * 1.5, false);
    expect(test.probes).toHaveLength(1);
    const lost = test.events.find((event) => event.event === 'lost');
    expect(lost?.at).toBeGreaterThanOrEqual(lastAnsweredSentAt + LOCK_MS);
    expect(lost?.at).toBeLessThanOrEqual(lastAnsweredSentAt + LOCK_MS + EVERY_MS);
    expect(test.events.filter((event) => event.event === 'lost')).toHaveLength(1);

    // The link heals: the hung probe's late answer is old news; the next, fresh one restores.
    test.probes.splice(0)[0]?.answer();
    await test.settle();
    expect(test.watchdog.isLost).toBe(true);
    await test.run(EVERY_MS, true);
    expect(test.watchdog.isLost).toBe(false);
    expect(test.events.map((event) => event.event)).toEqual(['lost', 'restored']);
  });

  it('counts an error reply as contact, a connection error not', async () => {
    const test = rig();
    test.watchdog.start();
    const replyError = Object.assign(new Error('WRONGTYPE'), { name: 'ReplyError' });
    for (let round = 0; round < 12; round++) {
      for (const probe of test.probes.splice(0)) probe.fail(replyError);
      await test.run(EVERY_MS, false);
    }
    expect(test.events).toEqual([]);
    for (let round = 0; round < 12; round++) {
      for (const probe of test.probes.splice(0)) probe.fail(new Error('Connection is closed.'));
      await test.run(EVERY_MS, false);
    }
    expect(test.events.map((event) => event.event)).toEqual(['lost']);
  });

  it('does not blame Redis for a silence of its own (a frozen process): a fresh probe decides', async () => {
    const test = rig();
    test.watchdog.start();
    await test.run(EVERY_MS * 2, true);
    const before = test.probes.length;
    // Frozen for three lock durations: no tick ran meanwhile; the one that runs on waking is late.
    test.advance(LOCK_MS * 3);
    test.watchdog.tick();
    await test.settle();
    expect(test.events).toEqual([]);
    expect(test.probes.length).toBe(before + 1);
    // Redis does not answer that fresh probe either: now it is Redis's silence.
    await test.run(LOCK_MS + EVERY_MS, false);
    expect(test.events.map((event) => event.event)).toEqual(['lost']);
  });
});
