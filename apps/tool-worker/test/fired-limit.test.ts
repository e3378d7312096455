import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { parseConfig } from '@switchyard/contracts';
import { describe, expect, it } from 'vitest';
import { firedLimit, totalLimitOf } from '../src/execution/fired-limit.ts';

const config = parseConfig({
  servers: {
    s: {
      command: 'node',
      timeoutMs: 3_000,
      maxTimeoutMs: 12_000,
      timeouts: 'adaptive',
      adaptiveTimeouts: { minMs: 200 },
    },
  },
}).servers.s;
if (!config) throw new Error('server s missing');

// The two timeouts as the SDK raises them (shared/protocol.js): the per-attempt timer and the total limit.
const perAttempt = McpError.fromError(ErrorCode.RequestTimeout, 'Request timed out', { timeout: 600 });
const total = McpError.fromError(ErrorCode.RequestTimeout, 'Maximum total timeout exceeded', {
  maxTotalTimeout: 12_000,
  totalElapsed: 12_034,
});

describe('the limit a timeout names', () => {
  it('names the total limit, not the per-attempt value, when maxTimeoutMs fired', () => {
    const limit = firedLimit('s', 'crawl', total, { timeoutMs: 3_000, basis: 'initial', samples: 0 }, config);
    expect(limit.text).toContain('did not finish within 12000 ms, its total limit (maxTimeoutMs');
    expect(limit.text).not.toContain('3000');
    expect(limit.error).toBe('timed out: total limit maxTimeoutMs 12000 ms fired after 12034 ms');
    expect(totalLimitOf(total)).toEqual({ maxTotalTimeout: 12_000, totalElapsed: 12_034 });
  });

  it('names the per-attempt value and where it came from', () => {
    const adaptive = firedLimit(
      's',
      'crawl',
      perAttempt,
      { timeoutMs: 600, basis: 'tool', p95Ms: 400, samples: 20 },
      config,
    );
    expect(adaptive.text).toBe(
      "The call to s/crawl did not finish within 600 ms, its per-attempt timeout (adaptive: 1.5 × the P95 (400 ms) of the tool's last 20 successful calls, within 200–12000 ms; progress restarts it), and was cancelled; it may or may not have taken effect.",
    );
    expect(adaptive.error).toBe('timed out: per-attempt timeout 600 ms (tool) fired');
    const start = firedLimit(
      's',
      'crawl',
      perAttempt,
      { timeoutMs: 3_000, basis: 'initial', samples: 4 },
      config,
    );
    expect(start.text).toContain(
      'within 3000 ms, its per-attempt timeout (the configured timeoutMs, until enough recent calls are known;',
    );
    expect(totalLimitOf(perAttempt)).toBeUndefined();
  });
});
