import { withOutcomeTexts } from '@switchyard/client';
import { describe, expect, it } from 'vitest';
import type { TranscriptMessage } from '../src/checkpoints/transcript-reader.ts';
import { localOutcome } from '../src/dispatch/local-outcome.ts';
import type { JobRecord, ToolCallRecord } from '../src/jobs/job-store.ts';
import { jobView } from '../src/jobs/job-view.ts';

const at = new Date('2026-12-02T00:00:00.000Z');
const JOB: JobRecord = {
  id: 'job_view-messages',
  team: 'alpha',
  kind: 'agent',
  status: 'succeeded',
  request: { kind: 'agent', input: 'Do it.', metadata: {} } as unknown as JobRecord['request'],
  result: 'Done.',
  error: null,
  traceId: '0'.repeat(32),
  traceparent: `00-${'0'.repeat(32)}-${'0'.repeat(16)}-01`,
  idempotencyKey: null,
  requestDigest: null,
  createdAt: at,
  startedAt: at,
  finishedAt: at,
};

function call(toolCallId: string, status: 'ok' | 'tool_error', text: string): ToolCallRecord {
  const outcome = localOutcome(
    { jobId: JOB.id, toolCallId, server: 'notes', tool: 'add_note', enqueuedAt: at.getTime() },
    status,
    text,
  );
  return {
    jobId: JOB.id,
    toolCallId,
    position: 0,
    modelTool: 'notes__add_note',
    server: 'notes',
    tool: 'add_note',
    arguments: {},
    status,
    outcome,
    dispatchedAt: at,
    finishedAt: at,
  } as ToolCallRecord;
}

const tool = (toolCallId: string, content: string): TranscriptMessage => ({
  role: 'tool',
  content,
  toolCallId,
  status: 'success',
});

describe('the transcript in the job view', () => {
  const calls = [call('c-ok', 'ok', 'note n1 stored'), call('c-err', 'tool_error', 'no such note')];
  const messages: TranscriptMessage[] = [
    { role: 'human', content: 'Do it.' },
    { role: 'ai', content: '', toolCalls: [{ id: 'c-ok', name: 'notes__add_note', args: {} }] },
    tool('c-ok', 'note n1 stored'),
    tool('c-err', '[tool_error] no such note'),
    // Not what the call's outcome says (a message from an earlier run): kept as it is.
    tool('c-other', 'something else'),
    { role: 'ai', content: 'Done.' },
  ];

  it('leaves out a tool message’s content when it is exactly its call’s outcome as the model read it', () => {
    const view = jobView(JOB, calls, messages);
    const tools = (view.messages ?? []).filter((message) => message.role === 'tool');
    expect(tools.find((message) => message.toolCallId === 'c-ok')).not.toHaveProperty('content');
    expect(tools.find((message) => message.toolCallId === 'c-err')).not.toHaveProperty('content');
    expect(tools.find((message) => message.toolCallId === 'c-other')?.content).toBe('something else');
    expect(view.messages?.at(-1)).toEqual({ role: 'assistant', content: 'Done.' });
  });

  it('keeps the content when the call says something else than the message', () => {
    const view = jobView(JOB, [call('c-ok', 'ok', 'a later, different result')], messages);
    expect(view.messages?.find((message) => message.toolCallId === 'c-ok')?.content).toBe('note n1 stored');
  });

  it('is filled in again by @switchyard/client, word for word', () => {
    const wire = JSON.parse(JSON.stringify(jobView(JOB, calls, messages)));
    const job = withOutcomeTexts(wire);
    expect(job.messages?.map((message) => message.content)).toEqual(
      messages.map((message) => message.content),
    );
  });
});
