import { SdkError, SdkErrorCode } from '@modelcontextprotocol/client';
import { buildOutcome, ServerConfigSchema } from '@switchyard/contracts';
import { describe, expect, it } from 'vitest';
import { CredentialError } from '../src/credentials/credential-error.ts';
import type { CallFailure } from '../src/execution/call-errors.ts';
import {
  type AttemptContext,
  type AttemptFailure,
  answerFacts,
  decideFailure,
  MAX_RESULT_DEPTH,
} from '../src/execution/outcome-mapping.ts';

const config = ServerConfigSchema.parse({ transport: 'stdio', command: 'node' });

function context(overrides: Partial<AttemptContext> = {}): AttemptContext {
  return {
    server: 'notes',
    tool: 'add_note',
    config,
    idempotent: true,
    previousAttempts: 0,
    lastAttempt: false,
    sent: true,
    taskCreated: false,
    timeout: { timeoutMs: 3_000, basis: 'static', samples: 0 },
    detail: 'it broke',
    ...overrides,
  };
}

const call = (kind: CallFailure['kind']): AttemptFailure => ({
  kind: 'call',
  failure:
    kind === 'protocol' ? { kind, message: 'MCP error -32603: boom', code: -32603 } : { kind, message: 'x' },
  error: kind === 'timeout' ? new SdkError(SdkErrorCode.RequestTimeout, 'Request timed out') : new Error('x'),
});

type Expected = 'retry' | 'put_back' | { status: string; executed: string };

/**
 * Each failure kind of a sent call × idempotent or not × last attempt or not: what the worker does.
 * Only an idempotent call with a retry left is retried, and only for a failure that may be transient.
 */
const TABLE: Array<[CallFailure['kind'], idempotent: boolean, lastAttempt: boolean, Expected]> = [];
const FINAL: Record<CallFailure['kind'], { status: string; executed: string } | 'put_back'> = {
  not_sent: 'put_back',
  timeout: { status: 'timeout', executed: 'unknown' },
  cancelled: { status: 'cancelled', executed: 'unknown' },
  invalid_params: { status: 'invalid_arguments', executed: 'no' },
  unknown_tool: { status: 'failed', executed: 'no' },
  refused: { status: 'failed', executed: 'no' },
  transport: { status: 'failed', executed: 'unknown' },
  connection_lost: { status: 'failed', executed: 'unknown' },
  protocol: { status: 'failed', executed: 'unknown' },
};
const RETRIED = new Set(['timeout', 'transport', 'connection_lost']);
for (const [kind, final] of Object.entries(FINAL) as Array<
  [CallFailure['kind'], (typeof FINAL)[CallFailure['kind']]]
>) {
  for (const idempotent of [true, false]) {
    for (const lastAttempt of [false, true]) {
      let expected: Expected = final;
      if (final !== 'put_back' && idempotent && !lastAttempt && RETRIED.has(kind)) expected = 'retry';
      // The revision's rule: a non-idempotent request lost with its connection is never re-issued.
      if (kind === 'connection_lost' && !idempotent)
        expected = { status: 'indeterminate', executed: 'unknown' };
      TABLE.push([kind, idempotent, lastAttempt, expected]);
    }
  }
}

describe('decideFailure', () => {
  it.each(TABLE)('%s, idempotent %s, last attempt %s → %j', (kind, idempotent, lastAttempt, expected) => {
    const decision = decideFailure(call(kind), context({ idempotent, lastAttempt, previousAttempts: 1 }));
    if (expected === 'retry') {
      // The attempt is named by what the call would have ended as on its last attempt.
      const last = decideFailure(call(kind), context({ idempotent, lastAttempt: true, previousAttempts: 1 }));
      expect(last.kind).toBe('outcome');
      expect(decision).toEqual({
        kind: 'retry',
        hold: true,
        reason: 'notes/add_note attempt 2: it broke',
        status: last.kind === 'outcome' ? last.facts.status : undefined,
      });
    } else if (expected === 'put_back') {
      expect(decision).toEqual({ kind: 'put_back', unmark: !idempotent, reason: 'it broke' });
    } else {
      expect(decision.kind).toBe('outcome');
      if (decision.kind !== 'outcome') return;
      expect(decision.hold).toBe(true);
      const outcome = buildOutcome(
        { jobId: 'j', toolCallId: 'c', server: 'notes', tool: 'add_note', enqueuedAt: 1 },
        decision.facts,
        10,
      );
      expect({ status: outcome.status, executed: outcome.executed }).toEqual(expected);
      expect(outcome.attempts).toBe(2);
    }
  });

  it('never retries a call whose task was created: the task is followed, not re-created', () => {
    expect(decideFailure(call('timeout'), context({ taskCreated: true })).kind).toBe('outcome');
  });

  it('names the task limit that fired, and the per-attempt timeout otherwise', () => {
    const task = decideFailure(
      { ...call('timeout'), taskTimeoutMs: 9_000 } as AttemptFailure,
      context({ lastAttempt: true }),
    );
    expect(task).toMatchObject({
      facts: { status: 'timeout', text: expect.stringContaining('9000 ms (tasks.maxDurationMs)') },
    });
    const attempt = decideFailure(call('timeout'), context({ lastAttempt: true }));
    expect(attempt).toMatchObject({
      facts: { error: 'timed out: per-attempt timeout 3000 ms (static) fired' },
    });
  });

  it('puts an unsent call back, taking back the marker of a non-idempotent one that was fenced', () => {
    expect(decideFailure(call('not_sent'), context({ idempotent: false, sent: false }))).toMatchObject({
      kind: 'put_back',
      unmark: false,
    });
    expect(decideFailure(call('not_sent'), context({ idempotent: false, sent: true }))).toMatchObject({
      kind: 'put_back',
      unmark: true,
    });
  });

  it.each([
    [{ kind: 'lock_lost' }, false, { kind: 'leave', sent: false }],
    [{ kind: 'lock_lost' }, true, { kind: 'leave', sent: true }],
    [
      { kind: 'already_sent' },
      false,
      { kind: 'outcome', hold: false, facts: { status: 'indeterminate', attempts: 1 } },
    ],
    [
      { kind: 'task_lost', message: 'gone' },
      true,
      { kind: 'outcome', hold: false, facts: { status: 'indeterminate', error: 'gone' } },
    ],
    [
      { kind: 'aborted', message: 'job cancelled' },
      false,
      {
        kind: 'outcome',
        hold: false,
        facts: { status: 'cancelled', executed: 'no', attempts: 0, error: 'job cancelled' },
      },
    ],
    [
      { kind: 'credential', error: new CredentialError('rejected', 'notes', 'alpha') },
      true,
      {
        kind: 'outcome',
        hold: true,
        facts: { status: 'failed', executed: 'no', attempts: 1, error: 'credential_rejected' },
      },
    ],
    [
      { kind: 'credential', error: new CredentialError('unstartable', 'notes', 'alpha') },
      false,
      { kind: 'outcome', hold: true, facts: { attempts: 0 } },
    ],
    [
      // The server's authorization cannot be used at all: unavailable to the call, still never sent.
      {
        kind: 'credential',
        error: new CredentialError(
          'unavailable',
          'notes',
          'alpha',
          'token endpoint https://as/token answered HTTP 404',
        ),
      },
      false,
      {
        kind: 'outcome',
        hold: true,
        facts: {
          status: 'unavailable',
          executed: 'no',
          attempts: 0,
          error: 'credential_unavailable',
          text: "Team alpha's credential for server notes could not be obtained: token endpoint https://as/token answered HTTP 404; the call to notes/add_note was not run.",
        },
      },
    ],
  ] as Array<[AttemptFailure, boolean, object]>)('%j (sent %s) → %j', (what, sent, expected) => {
    expect(decideFailure(what, context({ sent, idempotent: false }))).toMatchObject(expected);
  });

  it('quotes the reason a cancel of a running call named', () => {
    const decision = decideFailure(
      { ...call('cancelled'), abortReason: 'the job passed its deadline' } as AttemptFailure,
      context({ lastAttempt: true }),
    );
    expect(decision).toMatchObject({ facts: { status: 'cancelled', error: 'the job passed its deadline' } });
  });
});

describe('answerFacts', () => {
  const base = { server: 'notes', tool: 'add_note', attempts: 1, maxResultBytes: 1_000_000 };

  it('keeps a result as ok or tool_error', () => {
    expect(answerFacts({ content: [{ type: 'text', text: 'hi' }] }, base)).toMatchObject({ status: 'ok' });
    expect(answerFacts({ content: [], isError: true }, base)).toMatchObject({ status: 'tool_error' });
  });

  it('discards a result nested too deep, saying the call ran', () => {
    let deep: unknown = 1;
    for (let level = 0; level <= MAX_RESULT_DEPTH; level += 1) deep = [deep];
    expect(answerFacts({ content: [], structuredContent: { deep } }, base)).toMatchObject({
      status: 'failed',
      executed: 'yes',
      error: 'result_too_deep',
    });
  });

  it('ends a call whose question went unanswered input_required', () => {
    const unanswered = { mode: 'form', message: 'Which notebook?' } as never;
    expect(answerFacts({ content: [] }, { ...base, unanswered })).toMatchObject({
      status: 'input_required',
      executed: 'yes',
      text: 'notes/add_note asks: Which notebook?',
    });
  });
});
