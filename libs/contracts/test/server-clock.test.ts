import { afterEach, describe, expect, it, vi } from 'vitest';
import { ServerClock, type ServerTimeReply } from '../src/index.ts';

/**
 * A fake world: a monotonic clock the test moves, a wall clock `skewMs` ahead of "true" time, and a
 * Redis whose TIME is true time read `upMs` after the request left and answered `downMs` later.
 */
function world(options: { skewMs: number; trips: Array<{ upMs: number; downMs: number }> }) {
  let mono = 10_000;
  const trueEpochAtMono0 = 1_700_000_000_000;
  const trips = [...options.trips];
  let asked = 0;
  const time = async (): Promise<ServerTimeReply> => {
    asked += 1;
    const trip = trips.shift() ?? { upMs: 1, downMs: 1 };
    mono += trip.upMs;
    const redisMs = trueEpochAtMono0 + mono;
    mono += trip.downMs;
    return [String(Math.floor(redisMs / 1000)), String(Math.round((redisMs % 1000) * 1000))];
  };
  return {
    time,
    monotonic: () => mono,
    wall: () => trueEpochAtMono0 + mono + options.skewMs,
    trueNow: () => trueEpochAtMono0 + mono,
    advance: (ms: number) => {
      mono += ms;
    },
    asked: () => asked,
  };
}

describe('ServerClock', () => {
  it("maps a skewed host onto Redis's clock: now() is true time, offsetMs the host's skew", async () => {
    const fake = world({ skewMs: 400_000, trips: [{ upMs: 2, downMs: 2 }] });
    const clock = new ServerClock(fake.time, { samples: 1, monotonic: fake.monotonic, wall: fake.wall });
    expect(clock.now()).toBe(fake.wall()); // before the first measurement: the local clock
    const sample = await clock.sync();
    expect(sample).toEqual({ offsetMs: -400_000, rttMs: 4, errorMs: 2 });
    expect(Math.abs(clock.now() - fake.trueNow())).toBeLessThanOrEqual(1);
    fake.advance(5_000);
    // No TIME per reading: later readings follow the monotonic clock.
    expect(Math.abs(clock.now() - fake.trueNow())).toBeLessThanOrEqual(1);
    expect(fake.asked()).toBe(1);
  });

  it('corrects for the round trip, keeping the sample with the shortest one', async () => {
    // An asymmetric slow trip (Redis read 200 ms after sending, answered 0 ms later) would be 100 ms
    // off; the fast symmetric trip wins.
    const fake = world({
      skewMs: -30_000,
      trips: [
        { upMs: 200, downMs: 0 },
        { upMs: 1, downMs: 1 },
        { upMs: 0, downMs: 150 },
      ],
    });
    const clock = new ServerClock(fake.time, { samples: 3, monotonic: fake.monotonic, wall: fake.wall });
    const sample = await clock.sync();
    expect(sample.rttMs).toBe(2);
    expect(sample.offsetMs).toBe(30_000);
    expect(Math.abs(clock.now() - fake.trueNow())).toBeLessThanOrEqual(1);
  });

  it('ignores local wall-clock steps between measurements', async () => {
    let step = 0;
    const fake = world({ skewMs: 0, trips: [] });
    const clock = new ServerClock(fake.time, {
      samples: 1,
      monotonic: fake.monotonic,
      wall: () => fake.wall() + step,
    });
    await clock.sync();
    step = 3_600_000; // NTP stepped the host's clock by an hour
    fake.advance(10);
    expect(Math.abs(clock.now() - fake.trueNow())).toBeLessThanOrEqual(2);
  });

  it('keeps the last offset when a measurement fails, and shares a measurement under way', async () => {
    const fake = world({ skewMs: 5_000, trips: [] });
    let fail = false;
    const clock = new ServerClock(
      async () => {
        if (fail) throw new Error('Redis unreachable');
        return fake.time();
      },
      { samples: 1, monotonic: fake.monotonic, wall: fake.wall },
    );
    const [first, second] = await Promise.all([clock.sync(), clock.sync()]);
    expect(first).toBe(second);
    expect(fake.asked()).toBe(1);
    fail = true;
    await expect(clock.sync()).rejects.toThrow('Redis unreachable');
    expect(clock.synced).toBe(true);
    expect(Math.abs(clock.now() - fake.trueNow())).toBeLessThanOrEqual(1);
  });

  it('intersects the readings: replies that waited and requests that waited correct each other', async () => {
    // On a busy host no single round trip is short: one reply waited 40 ms for the event loop (read at
    // once), the next request waited 40 ms before the server read it. Either alone is 20 ms off.
    const fake = world({
      skewMs: 0,
      trips: [
        { upMs: 0, downMs: 40 },
        { upMs: 40, downMs: 0 },
      ],
    });
    const clock = new ServerClock(fake.time, { samples: 2, monotonic: fake.monotonic, wall: fake.wall });
    const sample = await clock.sync();
    expect(sample.rttMs).toBe(40);
    expect(sample.errorMs).toBe(0);
    expect(Math.abs(clock.now() - fake.trueNow())).toBeLessThanOrEqual(1);
  });

  it('keeps what earlier measurements knew, widened by the drift allowed since', async () => {
    const fake = world({
      skewMs: 0,
      trips: [
        { upMs: 0, downMs: 60 },
        { upMs: 60, downMs: 0 },
      ],
    });
    const clock = new ServerClock(fake.time, { samples: 1, monotonic: fake.monotonic, wall: fake.wall });
    expect((await clock.sync()).errorMs).toBe(30);
    expect(Math.abs(clock.now() - fake.trueNow())).toBeGreaterThanOrEqual(29);
    fake.advance(10_000);
    const second = await clock.sync();
    // 10 s at 100 ppm widen the first bounds by 1 ms on each side; the second reading's own are 60 ms wide.
    expect(second.errorMs).toBeLessThanOrEqual(1);
    expect(Math.abs(clock.now() - fake.trueNow())).toBeLessThanOrEqual(1);
  });

  it('starts afresh from a reading that disagrees with what it knew (the server clock stepped)', async () => {
    let step = 0;
    const fake = world({ skewMs: 0, trips: [] });
    const clock = new ServerClock(
      async () => {
        const [seconds, micros] = await fake.time();
        const ms = Number(seconds) * 1000 + Number(micros) / 1000 + step;
        return [String(Math.floor(ms / 1000)), String(Math.round((ms % 1000) * 1000))];
      },
      { samples: 1, monotonic: fake.monotonic, wall: fake.wall },
    );
    await clock.sync();
    step = 500;
    fake.advance(1_000);
    await clock.sync();
    expect(Math.abs(clock.now() - (fake.trueNow() + step))).toBeLessThanOrEqual(2);
  });

  describe('start()', () => {
    afterEach(() => {
      vi.useRealTimers();
    });

    it('measures every settleMs until the offset is precise, then every refreshMs', async () => {
      vi.useFakeTimers();
      let slow = true;
      const fake = world({ skewMs: 0, trips: [] });
      // Every request waits 20 ms before the server reads its clock until `slow` ends: the offset stays
      // about 10 ms uncertain, however many readings are intersected.
      const clock = new ServerClock(
        async () => {
          if (slow) fake.advance(20);
          return fake.time();
        },
        {
          samples: 1,
          settleMs: 1_000,
          refreshMs: 30_000,
          precisionMs: 2,
          monotonic: fake.monotonic,
          wall: fake.wall,
        },
      );
      const asked = () => fake.asked();
      clock.start();
      await vi.advanceTimersByTimeAsync(3_000);
      expect(asked()).toBe(3);
      slow = false;
      await vi.advanceTimersByTimeAsync(1_000);
      expect(clock.errorMs).toBeLessThanOrEqual(2);
      const settledAt = asked();
      await vi.advanceTimersByTimeAsync(29_000);
      expect(asked()).toBe(settledAt);
      await vi.advanceTimersByTimeAsync(1_000);
      expect(asked()).toBe(settledAt + 1);
      clock.stop();
      await vi.advanceTimersByTimeAsync(60_000);
      expect(asked()).toBe(settledAt + 1);
    });

    it('settles for the precision it has after maxSettleRounds measurements that cannot narrow it', async () => {
      vi.useFakeTimers();
      const fake = world({ skewMs: 0, trips: [] });
      // A store 20 ms away that always reads its clock halfway: every reading has the same bounds, ±10 ms.
      const clock = new ServerClock(
        async () => {
          fake.advance(10);
          const reply = await fake.time();
          fake.advance(10);
          return reply;
        },
        {
          samples: 1,
          settleMs: 1_000,
          refreshMs: 30_000,
          precisionMs: 2,
          maxSettleRounds: 5,
          monotonic: fake.monotonic,
          wall: fake.wall,
        },
      );
      clock.start();
      await vi.advanceTimersByTimeAsync(5_000);
      expect(fake.asked()).toBe(5);
      expect(clock.errorMs).toBeGreaterThan(2);
      // Then every refreshMs: none in the next 29 s, one at 30 s, one 30 s later.
      await vi.advanceTimersByTimeAsync(29_000);
      expect(fake.asked()).toBe(5);
      await vi.advanceTimersByTimeAsync(1_000);
      expect(fake.asked()).toBe(6);
      await vi.advanceTimersByTimeAsync(30_000);
      expect(fake.asked()).toBe(7);
      clock.stop();
    });
  });
});
