import { DetailedTaskV2Schema } from '@modelcontextprotocol/ext-tasks/core/v2';
import { describe, expect, it } from 'vitest';
import { localOutcome } from '../src/dispatch/local-outcome.ts';
import { headerMismatch } from '../src/gateway/mcp-headers.ts';
import { type TaskFacts, taskView } from '../src/gateway/task-view.ts';
import type { InputRecord } from '../src/jobs/input-store.ts';
import type { JobRecord, ToolCallRecord } from '../src/jobs/job-store.ts';

const JOB_ID = 'job_00000000-0000-4000-8000-000000000001';
const created = new Date('2026-12-01T10:00:00.000Z');
const call = { jobId: JOB_ID, toolCallId: 'call-1', server: 'notes', tool: 'add_note', enqueuedAt: 0 };

const job = (status: JobRecord['status'], finishedAt: Date | null = null): JobRecord => ({
  id: JOB_ID,
  team: 'alpha',
  kind: 'mcp',
  status,
  request: { kind: 'mcp', tool: 'notes__add_note', arguments: { text: 'x' } },
  result: null,
  error: null,
  traceId: 't',
  traceparent: 'p',
  idempotencyKey: null,
  requestDigest: null,
  createdAt: created,
  startedAt: created,
  finishedAt,
});

const record = (outcome: ToolCallRecord['outcome'], status = 'dispatched'): ToolCallRecord => ({
  jobId: JOB_ID,
  toolCallId: 'call-1',
  position: 0,
  modelTool: 'notes__add_note',
  server: 'notes',
  tool: 'add_note',
  arguments: { text: 'x' },
  status,
  outcome,
  dispatchedAt: created,
  finishedAt: null,
  redisEpoch: null,
});

const approval = (expiresAt: Date): InputRecord => ({
  jobId: JOB_ID,
  toolCallId: 'call-1',
  kind: 'approval',
  round: 0,
  server: 'notes',
  tool: 'add_note',
  request: {} as InputRecord['request'],
  expiresAt,
  state: 'pending',
  answer: null,
  decidedBy: null,
  decidedAt: null,
  createdAt: created,
});

const view = (facts: Partial<TaskFacts> & Pick<TaskFacts, 'job'>) => {
  const task = taskView({
    call: undefined,
    inputs: [],
    retentionMs: 86_400_000,
    maxDeadlineMs: 3_600_000,
    now: created.getTime() + 1_000,
    ...facts,
  });
  // Every view is a valid DetailedTask of the extension (its own schema).
  expect(DetailedTaskV2Schema.safeParse(task).success, JSON.stringify(task)).toBe(true);
  return task as Record<string, unknown> & { result?: Record<string, unknown> };
};

/** docs/semantics.md §16, Tasks: a job of kind mcp as the 2026-07-28 task clients poll. */
describe('gateway job → task', () => {
  it('is working while queued or running, with the job as the task id', () => {
    expect(view({ job: job('queued') })).toMatchObject({
      taskId: JOB_ID,
      status: 'working',
      ttlMs: 90_000_000,
    });
  });

  it('is input_required while its approval is open, naming the job and where to decide', () => {
    const task = view({
      job: job('input_required'),
      inputs: [approval(new Date(created.getTime() + 60_000))],
    });
    expect(task).toMatchObject({ status: 'input_required', inputRequests: {} });
    expect(task.statusMessage).toContain(`/v1/jobs/${JOB_ID}/approvals/call-1`);
  });

  it('follows the job: an approval recorded before the job parked is still working', () => {
    const open = [approval(new Date(created.getTime() + 60_000))];
    expect(view({ job: job('running'), inputs: open }).status).toBe('working');
  });

  it('is working again once the open approval has expired (its outcome is on its way)', () => {
    expect(view({ job: job('input_required'), inputs: [approval(created)] }).status).toBe('working');
  });

  it('completes with the blocking result, a denial included', () => {
    const ended = new Date(created.getTime() + 5_000);
    const denied = view({
      job: job('failed', ended),
      call: record(
        localOutcome(call, 'denied', 'A person denied this call.', 'approval_denied', 'no'),
        'denied',
      ),
    });
    expect(denied).toMatchObject({ status: 'completed', ttlMs: 86_405_000 });
    expect(denied.result).toMatchObject({ resultType: 'complete', isError: true });
    expect(JSON.stringify(denied.result)).toMatch(/\[denied\].*The tool did not run\./);
  });

  it('is cancelled when the job is, and never completed from a cancelled job', () => {
    const task = view({
      job: job('cancelled', created),
      call: record(localOutcome(call, 'cancelled', 'cancelled', 'cancelled', 'no'), 'cancelled'),
    });
    expect(task.status).toBe('cancelled');
    expect(task.statusMessage).toContain('The tool did not run.');
  });
});

describe('Mcp-Name on the tasks extension requests', () => {
  it('mirrors params.taskId', () => {
    const body = { jsonrpc: '2.0', id: 1, method: 'tasks/get', params: { taskId: JOB_ID } };
    expect(headerMismatch({ 'mcp-method': 'tasks/get', 'mcp-name': JOB_ID }, body)).toBeUndefined();
    expect(headerMismatch({ 'mcp-method': 'tasks/get', 'mcp-name': 'job_other' }, body)).toMatch(
      /params\.taskId/,
    );
  });
});
