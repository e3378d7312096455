import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiClient } from '../support/api-client.ts';
import { Deployment, TEAM_KEYS } from '../support/deployment.ts';
import { exampleServer } from '../support/fleet.ts';
import { type Interval, recordedIntervals } from '../support/intervals.ts';

const FLOOD = 30;

/**
 * Two teams on one `concurrency: 1` server: team beta floods it, then team alpha sends one call. With
 * `fairness: teams` (the default) alpha's call runs after at most the call running and one more, as
 * the server's own interval log shows; with `fairness: fifo` it waits behind the whole flood, which is
 * what the first case would show if fairness did nothing.
 */
describe('fair share of a serialized server between teams', () => {
  let deployment: Deployment;
  let alpha: ApiClient;
  let beta: ApiClient;

  beforeAll(async () => {
    deployment = new Deployment(
      'fair',
      (dir) => ({
        fair: exampleServer('recorder', {
          env: { RECORDER_LEDGER: `${dir}/fair.jsonl` },
          idempotent: ['record'],
          queueTimeoutMs: 600_000,
        }),
        fifo: exampleServer('recorder', {
          env: { RECORDER_LEDGER: `${dir}/fifo.jsonl` },
          idempotent: ['record'],
          queueTimeoutMs: 600_000,
          fairness: 'fifo',
        }),
      }),
      {
        teams: {
          alpha: { apiKeys: [TEAM_KEYS.alpha] },
          beta: { apiKeys: [TEAM_KEYS.beta] },
        },
      },
    );
    await deployment.startWorker({ id: 'w1' });
    const orchestrator = await deployment.startOrchestrator('o1');
    alpha = orchestrator.api('alpha');
    beta = orchestrator.api('beta');
  });

  afterAll(async () => {
    await deployment?.close();
  });

  /** Beta's flood, then (once the server has finished one of its calls) alpha's single call. */
  async function floodThenOne(server: string): Promise<{ intervals: Interval[]; alphaQueuedAt: number }> {
    const flood = await beta.submit({
      kind: 'batch',
      calls: Array.from({ length: FLOOD }, (_, index) => ({
        tool: `${server}__record`,
        arguments: { ms: 100, label: `beta-${index}` },
      })),
    });
    expect(flood.status, JSON.stringify(flood.body)).toBe(201);
    // The flood is queued and the server busy with it: one of its calls has finished.
    await beta.events(flood.body.id, (event) => event.event === 'tool_call.finished');
    const alphaQueuedAt = Date.now();
    const single = await alpha.submit({
      kind: 'batch',
      calls: [{ tool: `${server}__record`, arguments: { ms: 100, label: 'alpha' } }],
    });
    expect(single.status, JSON.stringify(single.body)).toBe(201);
    const [floodJob, singleJob] = await Promise.all([
      beta.finished(flood.body.id, 300_000),
      alpha.finished(single.body.id, 300_000),
    ]);
    expect(floodJob.status).toBe('succeeded');
    expect(singleJob.status).toBe('succeeded');
    return { intervals: recordedIntervals(deployment.path(`${server}.jsonl`)), alphaQueuedAt };
  }

  /** Beta's calls that started after alpha's was queued and before alpha's started. */
  function betaCallsAhead(intervals: Interval[], alphaQueuedAt: number): number {
    const alphaRun = intervals.find((interval) => interval.label === 'alpha');
    expect(alphaRun).toBeDefined();
    return intervals.filter(
      (interval) =>
        interval.label?.startsWith('beta-') &&
        interval.start > alphaQueuedAt &&
        interval.start < (alphaRun as Interval).start,
    ).length;
  }

  it('runs the other team’s single call after at most two calls of the flood', async () => {
    const { intervals, alphaQueuedAt } = await floodThenOne('fair');
    expect(intervals).toHaveLength(FLOOD + 1);
    expect(betaCallsAhead(intervals, alphaQueuedAt)).toBeLessThanOrEqual(2);
  });

  it('with fairness: fifo, the single call waits behind the flood', async () => {
    const { intervals, alphaQueuedAt } = await floodThenOne('fifo');
    expect(intervals).toHaveLength(FLOOD + 1);
    expect(betaCallsAhead(intervals, alphaQueuedAt)).toBeGreaterThan(FLOOD / 2);
  });
});
