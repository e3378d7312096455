import { describe, expect, it } from 'vitest';
import {
  buildOutcome,
  OutcomeNoticeSchema,
  outcomeNoticeFields,
  parseOutcomeNotice,
  ToolCallOutcomeSchema,
} from '../src/index.ts';

const CALL = {
  jobId: 'job-1',
  toolCallId: 'call-1',
  server: 'notes',
  tool: 'add_note',
  enqueuedAt: 1_000,
  trace: { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' },
};

describe('buildOutcome', () => {
  it('measures queue wait to the pick-up and run time from the send', () => {
    const outcome = buildOutcome(
      CALL,
      { status: 'ok', attempts: 1, workerId: 'w1', pickedUpAt: 1_250, sentAt: 1_300 },
      1_900,
    );
    expect(outcome).toMatchObject({
      executed: 'yes',
      queuedMs: 250,
      runMs: 600,
      finishedAt: 1_900,
      startedAt: 1_300,
      workerId: 'w1',
      traceId: '0af7651916cd43dd8448eb211c80319c',
    });
  });

  it('decided without a worker: never sent, waited until now, executed as the status implies', () => {
    const outcome = buildOutcome(CALL, { status: 'expired', text: 'waited too long' }, 61_000);
    expect(outcome).toMatchObject({ attempts: 0, executed: 'no', queuedMs: 60_000, runMs: 0 });
    expect(outcome).not.toHaveProperty('workerId');
    expect(outcome).not.toHaveProperty('startedAt');
    expect(buildOutcome(CALL, { status: 'cancelled', text: 'stopped', executed: 'unknown' }).executed).toBe(
      'unknown',
    );
  });

  it('stores a result text once, and parsing gives it back', () => {
    const content = [{ type: 'text', text: 'the note was added' }];
    const stored = buildOutcome(CALL, { status: 'ok', attempts: 1, text: 'the note was added', content });
    expect(stored).not.toHaveProperty('text');
    expect(ToolCallOutcomeSchema.parse(stored).text).toBe('the note was added');
  });
});

describe('outcome notices', () => {
  it('round-trips through the stream field list', () => {
    const notice = { queue: 'tools.{notes}', id: 'tc-abc', outcome: '{"status":"ok"}' };
    expect(parseOutcomeNotice(outcomeNoticeFields(notice))).toEqual(notice);
  });

  it('refuses an entry with neither or both of outcome and failedReason', () => {
    expect(parseOutcomeNotice(['queue', 'tools.{notes}', 'id', 'tc-abc'])).toBeUndefined();
    expect(
      OutcomeNoticeSchema.safeParse({ queue: 'q', id: 'i', outcome: '{}', failedReason: 'x' }).success,
    ).toBe(false);
    expect(parseOutcomeNotice(['id', 'tc-abc', 'failedReason', 'stalled'])).toBeUndefined();
  });
});
