import { toolCallJobId } from '@switchyard/contracts';
import { describe, expect, it } from 'vitest';
import type { Freeze } from './chaos.ts';
import {
  atMostOnce,
  concurrencyLimit,
  type Evidence,
  executedIsTruthful,
  inFlightDuringFreezes,
  lostQueueJobsOnlyAfterDataLoss,
  noUnaskedCancel,
  type RecordedCall,
  streamsEndWithFinalStatus,
} from './promises.ts';

/** The fault suite's judges, on hand-made evidence: each must catch what it is there to catch. */
function evidence(parts: Partial<Evidence>): Evidence {
  return {
    jobs: [],
    open: [],
    planned: new Map(),
    notes: [],
    serial: [],
    pair: [],
    freezes: [],
    kills: [],
    lostLocks: [],
    pidOwners: new Map([
      [101, 'w1'],
      [202, 'w2'],
    ]),
    exits: [],
    redisDataLosses: 0,
    streamEnds: [],
    ...parts,
  };
}

const note = (text: string, executed: string, status = 'ok') => ({
  id: `call-${text}`,
  tool: 'notes__add_note',
  arguments: { text },
  outcome: { status, executed, attempts: 1, workerId: 'w1' },
});

const call = (label: string, start: number, end: number, pid: number): RecordedCall => ({
  label,
  start,
  end,
  pid,
});

describe('fault suite promises', () => {
  it('counts a note started twice as a duplicate execution', () => {
    const finding = atMostOnce(
      evidence({
        jobs: [{ id: 'job-1', status: 'succeeded', toolCalls: [note('a', 'yes'), note('b', 'yes')] }],
        notes: [
          { phase: 'start', text: 'a', pid: 101 },
          { phase: 'start', text: 'b', pid: 101 },
          { phase: 'start', text: 'b', pid: 202 },
        ],
      }),
    );
    expect(finding.broken).toBe(1);
    expect(finding.examples[0]).toMatchObject({ label: 'b', starts: 2, by: ['w1', 'w2'] });
  });

  it('catches `executed: no` for a write the ledger saw start, and `yes` for one it never saw', () => {
    const finding = executedIsTruthful(
      evidence({
        jobs: [
          {
            id: 'job-1',
            status: 'succeeded',
            toolCalls: [
              note('ran', 'no', 'cancelled'),
              note('never', 'yes'),
              note('fine', 'unknown', 'indeterminate'),
            ],
          },
        ],
        notes: [
          { phase: 'start', text: 'ran', pid: 101 },
          { phase: 'start', text: 'fine', pid: 101 },
        ],
      }),
    );
    expect(finding.examples.map((example) => (example as { label: string }).label)).toEqual(['ran', 'never']);
  });

  it('reports a final job whose event stream does not end with its status, unless it was unreadable', () => {
    const finding = streamsEndWithFinalStatus(
      evidence({
        streamEnds: [
          { job: 'lost', status: 'succeeded', streamEndsWith: 'running' },
          { job: 'none', status: 'failed' },
          { job: 'fine', status: 'succeeded', streamEndsWith: 'succeeded' },
          { job: 'gone', status: 'succeeded', unreadable: 'no live orchestrator' },
        ],
      }),
    );
    expect(finding.broken).toBe(2);
    expect(JSON.stringify(finding.examples)).toContain('lost');
    expect(JSON.stringify(finding.examples)).toContain('none');
  });

  it('reports every cancelled outcome, since nobody cancels in the suite', () => {
    const finding = noUnaskedCancel(
      evidence({
        jobs: [
          { id: 'job-1', status: 'succeeded', toolCalls: [note('a', 'no', 'cancelled'), note('b', 'yes')] },
        ],
      }),
    );
    expect(finding.broken).toBe(1);
  });

  it('excuses an overlap with a frozen worker’s own running call, and no other', () => {
    const frozen: Freeze = { workerId: 'w1', pod: false, serverPids: [101], from: 1_000, to: 5_000 };
    const finding = concurrencyLimit(
      evidence({ freezes: [frozen] }),
      [
        // w1 froze while its call ran; w2 ran the next calls meanwhile: allowed.
        call('held', 900, 4_000, 101),
        call('next', 3_500, 3_600, 202),
        // Two of w2's calls at once, nothing frozen involved: broken.
        call('x', 6_000, 6_100, 202),
        call('y', 6_050, 6_150, 202),
      ],
      1,
    );
    expect(finding.broken).toBe(1);
    expect(finding.examples[0]).toMatchObject({ started: { label: 'y' }, whileRunning: [{ label: 'x' }] });
    expect(finding.excused?.count).toBe(1);
    expect(finding.excused?.examples[0]).toMatchObject({ started: { label: 'next' } });
  });

  it('excuses an overlap with a call whose worker lost its lock or was killed during it, and no other', () => {
    const recorded = (label: string) => ({
      id: `call-${label}`,
      tool: 'rec-serial__record',
      arguments: { label },
      outcome: { status: 'ok', executed: 'yes' },
    });
    const jobs = [
      {
        id: 'job-1',
        status: 'succeeded',
        toolCalls: ['starved', 'after', 'orphan', 'next', 'kept', 'late'].map(recorded),
      },
    ];
    const bullId = (label: string) => toolCallJobId('job-1', `call-${label}`);
    const finding = concurrencyLimit(
      evidence({
        jobs,
        // w1 lost the lock of `starved` while it ran; its loss of `kept` was logged before `kept` started.
        lostLocks: [
          { workerId: 'w1', bullJobId: bullId('starved'), at: 1_500 },
          { workerId: 'w1', bullJobId: bullId('kept'), at: 9_000 },
        ],
        kills: [{ workerId: 'w1', at: 5_100 }],
      }),
      [
        call('starved', 1_000, 3_500, 101),
        call('after', 3_000, 3_100, 202),
        // Killed while its server ran `orphan`: the server finished it after w2 took the next call.
        call('orphan', 5_000, 7_500, 101),
        call('next', 7_000, 7_100, 202),
        // Nothing happened to w1 while `kept` ran: the overlap is real.
        call('kept', 10_000, 12_000, 101),
        call('late', 11_000, 11_100, 202),
      ],
      1,
    );
    expect(finding.broken).toBe(1);
    expect(finding.examples[0]).toMatchObject({
      started: { label: 'late' },
      whileRunning: [{ label: 'kept' }],
    });
    expect(finding.excused?.count).toBe(2);
    expect(finding.excused?.examples).toMatchObject([
      {
        started: { label: 'after' },
        whileRunning: [{ label: 'starved', ownershipLost: 'w1 lost the lock' }],
      },
      { started: { label: 'next' }, whileRunning: [{ label: 'orphan', ownershipLost: 'w1 killed' }] },
    ]);
  });

  it('allows a call lost with its queue job only after Redis lost its data, and only as may-have-run', () => {
    const lost = { ...note('lost', 'unknown', 'indeterminate') };
    lost.outcome = { ...lost.outcome, error: 'redis_data_lost' } as typeof lost.outcome;
    const claimed = note('claimed', 'no', 'cancelled');
    claimed.outcome = { ...claimed.outcome, error: 'redis_data_lost' } as typeof claimed.outcome;
    const jobs = [{ id: 'job-1', status: 'completed_with_errors', toolCalls: [lost, note('fine', 'yes')] }];
    expect(lostQueueJobsOnlyAfterDataLoss(evidence({ jobs })).broken).toBe(1);
    expect(lostQueueJobsOnlyAfterDataLoss(evidence({ jobs, redisDataLosses: 1 })).broken).toBe(0);
    const lying = [{ id: 'job-2', status: 'completed_with_errors', toolCalls: [claimed] }];
    expect(lostQueueJobsOnlyAfterDataLoss(evidence({ jobs: lying, redisDataLosses: 1 })).broken).toBe(1);
  });

  it('lists the calls a frozen worker’s servers were running during the freeze', () => {
    const time = (ms: number) => new Date(ms).toISOString();
    const frozen: Freeze = { workerId: 'w1', pod: true, serverPids: [101], from: 10_000, to: 15_000 };
    const [report] = inFlightDuringFreezes(
      evidence({
        freezes: [frozen],
        notes: [
          { phase: 'start', text: 'finished-before', pid: 101, time: time(8_000) },
          { phase: 'done', text: 'finished-before', pid: 101, time: time(9_000) },
          { phase: 'start', text: 'held', pid: 101, time: time(9_500) },
          { phase: 'done', text: 'held', pid: 101, time: time(15_500) },
          { phase: 'start', text: 'other-worker', pid: 202, time: time(11_000) },
        ],
        serial: [{ label: 'long', start: 9_000, end: 12_000, pid: 101 }],
      }),
    );
    expect(report).toMatchObject({ worker: 'w1', ms: 5_000, calls: ['held', 'long'] });
  });
});
