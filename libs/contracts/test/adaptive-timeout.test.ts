import { describe, expect, it } from 'vitest';
import {
  describeTimeoutBasis,
  effectiveTimeout,
  encodeLatencySample,
  parseConfig,
  percentile,
  recentDurations,
  redisKeys,
} from '../src/index.ts';
import { errorOf } from './config-error.ts';

const server = (extra: Record<string, unknown>) => {
  const config = parseConfig({ servers: { s: { command: 'node', timeoutMs: 2_000, ...extra } } });
  const resolved = config.servers.s;
  if (!resolved) throw new Error('server s missing');
  return resolved;
};

const adaptive = (settings: Record<string, unknown> = {}) =>
  server({ timeouts: 'adaptive', adaptiveTimeouts: { minSamples: 5, windowSamples: 50, ...settings } });

const configError = (raw: Record<string, unknown>) =>
  errorOf(() => parseConfig({ servers: { s: { command: 'node', timeoutMs: 2_000, ...raw } } }));

describe('percentile', () => {
  it('is the nearest rank: P95 of 1..100 is 95, of 1..20 is 19, of one value that value', () => {
    const hundred = Array.from({ length: 100 }, (_, i) => 100 - i);
    expect(percentile(hundred, 95)).toBe(95);
    expect(
      percentile(
        Array.from({ length: 20 }, (_, i) => i + 1),
        95,
      ),
    ).toBe(19);
    expect(percentile([42], 95)).toBe(42);
  });

  it('refuses an empty list instead of inventing a value', () => {
    expect(() => percentile([], 95)).toThrow(RangeError);
  });
});

describe('recentDurations', () => {
  it('keeps the entries inside the window and skips malformed ones', () => {
    const now = 1_000_000;
    const entries = [
      encodeLatencySample(120.4, now - 10),
      encodeLatencySample(80, now - 5_000),
      encodeLatencySample(999, now - 60_001),
      'garbage',
      '12@',
    ];
    expect(recentDurations(entries, now, 60_000)).toEqual([120, 80]);
  });
});

describe('effectiveTimeout', () => {
  it('is timeoutMs for a static server, however many samples exist', () => {
    expect(effectiveTimeout(server({}), [10, 10, 10, 10, 10], [10, 10, 10, 10, 10])).toEqual({
      timeoutMs: 2_000,
      basis: 'static',
      samples: 0,
    });
  });

  it('starts at timeoutMs until minSamples recent calls are known', () => {
    expect(effectiveTimeout(adaptive(), [100], [100, 100, 100, 100])).toEqual({
      timeoutMs: 2_000,
      basis: 'initial',
      samples: 4,
    });
  });

  it("uses the server's P95 until the tool has enough samples of its own, then the tool's", () => {
    const serverDurations = [100, 100, 100, 100, 200];
    const fromServer = effectiveTimeout(adaptive({ minMs: 10 }), [40], serverDurations);
    expect(fromServer).toEqual({ timeoutMs: 300, basis: 'server', p95Ms: 200, samples: 5 });
    const fromTool = effectiveTimeout(adaptive({ minMs: 10 }), [40, 40, 40, 40, 60], serverDurations);
    expect(fromTool).toEqual({ timeoutMs: 90, basis: 'tool', p95Ms: 60, samples: 5 });
  });

  it('clamps factor × P95 to [minMs, maxMs]', () => {
    const config = adaptive({ factor: 2, minMs: 500, maxMs: 3_000 });
    expect(effectiveTimeout(config, [], [50, 50, 50, 50, 50]).timeoutMs).toBe(500);
    expect(effectiveTimeout(config, [], [1_000, 1_000, 1_000, 1_000, 1_000]).timeoutMs).toBe(2_000);
    expect(effectiveTimeout(config, [], [9_000, 9_000, 9_000, 9_000, 9_000]).timeoutMs).toBe(3_000);
  });
});

describe('adaptive timeout config', () => {
  it('defaults to static, factor 1.5, and maxMs = maxTimeoutMs', () => {
    const config = server({});
    expect(config.timeouts).toBe('static');
    expect(config.adaptiveTimeouts).toEqual({
      factor: 1.5,
      minMs: 250,
      maxMs: 8_000,
      minSamples: 20,
      windowSamples: 200,
      windowMs: 900_000,
    });
  });

  it('names the key of a bad setting', () => {
    expect(configError({ timeouts: 'learned' }).key).toBe('servers.s.timeouts');
    expect(configError({ timeouts: 'adaptive', adaptiveTimeouts: { factor: 0.5 } }).key).toBe(
      'servers.s.adaptiveTimeouts.factor',
    );
    const tooHigh = configError({ timeouts: 'adaptive', adaptiveTimeouts: { maxMs: 9_000 } });
    expect(tooHigh.key).toBe('servers.s.adaptiveTimeouts.maxMs');
    expect(tooHigh.message).toContain('must be at most maxTimeoutMs (8000)');
    const inverted = configError({ timeouts: 'adaptive', adaptiveTimeouts: { minMs: 900, maxMs: 800 } });
    expect(inverted.key).toBe('servers.s.adaptiveTimeouts.maxMs');
    const samples = configError({
      timeouts: 'adaptive',
      adaptiveTimeouts: { minSamples: 30, windowSamples: 10 },
    });
    expect(samples.key).toBe('servers.s.adaptiveTimeouts.minSamples');
    expect(configError({ adaptiveTimeouts: { window: 10 } }).key).toBe('servers.s.adaptiveTimeouts');
  });

  it('does not hold a static server to adaptive settings it never uses', () => {
    expect(server({ timeoutMs: 40 }).adaptiveTimeouts.minMs).toBe(250);
  });
});

describe('latency keys', () => {
  it("share the server's hash tag with its queue and keep tools apart", () => {
    expect(redisKeys.latency('p', 'docs')).toBe('p:latency:{docs}');
    expect(redisKeys.latency('p', 'docs', 'search')).toBe('p:latency:{docs}:tool:search');
  });
});

describe('describeTimeoutBasis', () => {
  it('says where a timeout came from', () => {
    const settings = { factor: 1.5, minMs: 500, maxMs: 20_000 };
    expect(describeTimeoutBasis({ timeoutMs: 2_000, basis: 'static', samples: 0 }, settings)).toBe(
      'the configured timeoutMs',
    );
    expect(describeTimeoutBasis({ timeoutMs: 2_000, basis: 'initial', samples: 3 }, settings)).toBe(
      'the configured timeoutMs, until enough recent calls are known',
    );
    expect(describeTimeoutBasis({ timeoutMs: 600, basis: 'tool', p95Ms: 400, samples: 10 }, settings)).toBe(
      "adaptive: 1.5 × the P95 (400 ms) of the tool's last 10 successful calls, within 500–20000 ms",
    );
  });
});
