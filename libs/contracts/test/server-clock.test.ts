import { describe, expect, it } from 'vitest';
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
    expect(sample).toEqual({ offsetMs: -400_000, rttMs: 4 });
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
});
