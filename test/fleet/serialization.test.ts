import type { ToolCallOutcome } from '@switchyard/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exampleServer, Fleet } from '../support/fleet.ts';
import { recordedIntervals as intervals, overlaps, sharedTime } from '../support/intervals.ts';

/**
 * docs/semantics.md §1, across the fleet: two worker processes each hold their own stdio child of the
 * recorder server, and the ledger they share shows whether two calls were ever in flight at once.
 */
describe('serialization across worker processes', () => {
  let fleet: Fleet;

  beforeAll(async () => {
    fleet = new Fleet('serial', (dir) => ({
      recorder: exampleServer('recorder', {
        env: { RECORDER_LEDGER: `${dir}/recorder.jsonl` },
        idempotent: ['record'],
      }),
      'recorder-b': exampleServer('recorder', {
        env: { RECORDER_LEDGER: `${dir}/recorder-b.jsonl` },
        idempotent: ['record'],
      }),
    }));
    await Promise.all([fleet.startWorker({ id: 'w-one' }), fleet.startWorker({ id: 'w-two' })]);
  });

  afterAll(async () => {
    await fleet?.close();
  });

  it('never runs two calls to a concurrency-1 server at once, over hundreds of calls from two workers', async () => {
    const dispatcher = await fleet.dispatcher();
    const calls = 300;
    const waveSize = 10;
    // A busy worker takes the next job as it finishes the last, so one continuous stream would stay on
    // one worker. Waves let the queue drain: the next wave wakes the worker that has waited longest.
    const outcomes: ToolCallOutcome[] = [];
    for (let wave = 0; wave < calls / waveSize; wave++) {
      outcomes.push(
        ...(await Promise.all(
          Array.from({ length: waveSize }, (_, index) =>
            dispatcher.dispatch({
              jobId: 'serial',
              toolCallId: `c${wave}-${index}`,
              server: 'recorder',
              tool: 'record',
              arguments: { ms: 2, label: `c${wave}-${index}` },
            }),
          ),
        )),
      );
    }
    expect(outcomes.filter((outcome) => outcome.status === 'ok')).toHaveLength(calls);
    // Both workers took part, so the absence of overlap is the fleet-wide limit, not one worker's.
    const takenBy = (worker: string) => outcomes.filter((outcome) => outcome.workerId === worker).length;
    expect(takenBy('w-one')).toBeGreaterThan(calls * 0.2);
    expect(takenBy('w-two')).toBeGreaterThan(calls * 0.2);

    const recorded = intervals(fleet.path('recorder.jsonl'));
    expect(recorded).toHaveLength(calls);
    expect(overlaps(recorded)).toEqual([]);
  });

  it('lets calls to different servers run at the same time', async () => {
    const dispatcher = await fleet.dispatcher();
    const perServer = 12;
    const dispatchTo = (server: string) =>
      Array.from({ length: perServer }, (_, index) =>
        dispatcher.dispatch({
          jobId: 'parallel',
          toolCallId: `${server}-${index}`,
          server,
          tool: 'record',
          arguments: { ms: 50, label: `parallel-${server}-${index}` },
        }),
      );
    const outcomes = await Promise.all([...dispatchTo('recorder'), ...dispatchTo('recorder-b')]);
    expect(outcomes.every((outcome) => outcome.status === 'ok')).toBe(true);

    const a = intervals(fleet.path('recorder.jsonl')).filter((row) => row.label?.startsWith('parallel-'));
    const b = intervals(fleet.path('recorder-b.jsonl')).filter((row) => row.label?.startsWith('parallel-'));
    expect(overlaps(a)).toEqual([]);
    expect(overlaps(b)).toEqual([]);
    const busyA = a.reduce((sum, row) => sum + row.end - row.start, 0);
    // Each server's calls are serialized, but the two servers' calls overlap for most of their run time.
    const ratio = sharedTime(a, b) / busyA;
    console.info(`cross-server overlap: ${(ratio * 100).toFixed(0)}% of server A's busy time`);
    expect(ratio).toBeGreaterThan(0.5);
  });
});
