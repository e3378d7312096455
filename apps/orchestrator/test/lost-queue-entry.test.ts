import type { ToolCallOutcome } from '@switchyard/contracts';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import type { ModelTool, ModelToolCatalog } from '../src/catalog/model-tool-catalog.ts';
import { localOutcome } from '../src/dispatch/local-outcome.ts';
import type { ProgressListener } from '../src/dispatch/progress-listener.ts';
import type { ToolCallDispatcher } from '../src/dispatch/tool-call-dispatcher.ts';
import type { ToolCallRequest } from '../src/dispatch/tool-call-request.ts';
import type { InputStore } from '../src/jobs/input-store.ts';
import type { JobEvents } from '../src/jobs/job-events.ts';
import type { JobRecord, JobStore, ToolCallRecord } from '../src/jobs/job-store.ts';
import type { QueueEpochs } from '../src/jobs/queue-epochs.ts';
import type { OrchestratorMetrics } from '../src/metrics/orchestrator-metrics.ts';
import type { ApprovalGate } from '../src/tool-calls/approval-gate.ts';
import { UNCONTESTED_LEASE } from '../src/tool-calls/call-lease.ts';
import { lostEntryDecision } from '../src/tool-calls/lost-queue-entry.ts';
import { ToolCallLifeCycle } from '../src/tool-calls/tool-call-life-cycle.ts';

describe('the decision for a dispatched call whose queue job is gone', () => {
  it('adds it again when it was recorded under the epoch Redis has now: it was never queued', () => {
    for (const idempotent of [true, false]) {
      expect(lostEntryDecision({ recordedEpoch: 'e1', currentEpoch: 'e1', idempotent })).toBe('add');
    }
  });

  it('settles a non-idempotent call indeterminate when Redis lost its data since (or the epoch is unknown)', () => {
    expect(lostEntryDecision({ recordedEpoch: 'e1', currentEpoch: 'e2', idempotent: false })).toBe(
      'indeterminate',
    );
    expect(lostEntryDecision({ recordedEpoch: null, currentEpoch: 'e2', idempotent: false })).toBe(
      'indeterminate',
    );
  });

  it('adds an idempotent call again under any epoch: running it twice is allowed', () => {
    expect(lostEntryDecision({ recordedEpoch: 'e1', currentEpoch: 'e2', idempotent: true })).toBe('add');
    expect(lostEntryDecision({ recordedEpoch: null, currentEpoch: 'e2', idempotent: true })).toBe('add');
  });
});

/**
 * The life cycle re-dispatching a call PostgreSQL shows `dispatched` whose queue job does not exist
 * (a run queued again after Redis lost its data): stand-ins for the store, catalog and dispatcher.
 */
describe('re-dispatch of a call recorded dispatched', () => {
  const job = {
    id: 'job-1',
    team: 'alpha',
    kind: 'batch',
    traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
  } as JobRecord;

  async function redispatch(options: {
    recordedEpoch: string | null;
    currentEpoch: string;
    idempotent: boolean;
  }) {
    const recorded: ToolCallRecord = {
      jobId: job.id,
      toolCallId: 'call-1',
      position: 0,
      modelTool: 'notes__add_note',
      server: 'notes',
      tool: 'add_note',
      arguments: { text: 'once' },
      status: 'dispatched',
      outcome: null,
      dispatchedAt: new Date(),
      finishedAt: null,
      redisEpoch: options.recordedEpoch,
    };
    const stored: ToolCallOutcome[] = [];
    const dispatched: ToolCallRequest[] = [];
    const store = {
      toolCall: async () => recorded,
      recordCall: async () => true,
      recordOutcome: async (_job: string, _call: string, outcome: ToolCallOutcome) => {
        stored.push(outcome);
      },
    } as unknown as JobStore;
    const events = {
      publishWith: async (
        _job: string,
        type: string,
        data: Record<string, unknown>,
        write: (e: unknown) => unknown,
      ) => write({ type, data }),
    } as unknown as JobEvents;
    const tool = {
      name: 'notes__add_note',
      server: 'notes',
      tool: 'add_note',
      idempotent: options.idempotent,
    };
    const catalog = { resolve: async () => ({ tool: tool as ModelTool }) } as unknown as ModelToolCatalog;
    const ok = localOutcome(
      { jobId: job.id, toolCallId: 'call-1', server: 'notes', tool: 'add_note', enqueuedAt: Date.now() },
      'ok',
      'noted',
      undefined,
      'yes',
    );
    const dispatcher = {
      // The queue job is gone: Redis lost it, or the earlier run stopped before its add.
      queue: () => ({ getJob: async () => undefined }),
      dispatch: async (request: ToolCallRequest) => {
        dispatched.push(request);
        return ok;
      },
    } as unknown as ToolCallDispatcher;
    const metrics = { toolCall: () => undefined } as unknown as OrchestratorMetrics;
    const approvals = { check: async () => ({ pass: true }) } as unknown as ApprovalGate;
    const inputs = { lastQuestion: async () => undefined } as unknown as InputStore;
    const epochs = {
      read: async () => ({ epoch: options.currentEpoch, changed: false, lost: false }),
      forDispatch: async () => options.currentEpoch,
    } as unknown as QueueEpochs;
    // No worker runs here: nobody reports progress.
    const progress = { on: () => () => undefined } as unknown as ProgressListener;
    const lifeCycle = new ToolCallLifeCycle(
      store,
      events,
      catalog,
      dispatcher,
      metrics,
      approvals,
      inputs,
      epochs,
      progress,
    );
    const never = new AbortController().signal;
    const outcome = await lifeCycle.execute(
      {
        job,
        filters: [],
        cancel: never,
        cancelReason: () => 'not cancelled',
        lease: UNCONTESTED_LEASE,
        stop: never,
        log: pino({ level: 'silent' }),
        deadlineAt: Date.now() + 60_000,
        waits: { approval: false, question: false },
      },
      { id: 'call-1', name: 'notes__add_note', args: { text: 'once' }, position: 0 },
    );
    return { outcome: outcome as ToolCallOutcome, stored, dispatched };
  }

  it('dispatches it again under its id when the epoch is the same: it was never queued', async () => {
    const { outcome, dispatched } = await redispatch({
      recordedEpoch: 'e1',
      currentEpoch: 'e1',
      idempotent: false,
    });
    expect(dispatched.map((request) => request.toolCallId)).toEqual(['call-1']);
    expect(outcome.status).toBe('ok');
  });

  it('does not add a non-idempotent call lost with Redis’s data: indeterminate, executed unknown', async () => {
    const { outcome, stored, dispatched } = await redispatch({
      recordedEpoch: 'e1',
      currentEpoch: 'e2',
      idempotent: false,
    });
    expect(dispatched).toEqual([]);
    expect(outcome).toMatchObject({ status: 'indeterminate', executed: 'unknown', error: 'redis_data_lost' });
    expect(outcome.text).toMatch(/Redis lost the queue entry/);
    expect(stored.map((entry) => entry.status)).toEqual(['indeterminate']);
  });

  it('dispatches an idempotent call again under its id after a loss', async () => {
    const { outcome, dispatched } = await redispatch({
      recordedEpoch: 'e1',
      currentEpoch: 'e2',
      idempotent: true,
    });
    expect(dispatched.map((request) => request.toolCallId)).toEqual(['call-1']);
    expect(outcome.status).toBe('ok');
  });
});
