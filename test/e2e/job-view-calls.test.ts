import { OUTCOME_ENVELOPE_BYTES } from '@switchyard/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiClient, Json } from '../support/api-client.ts';
import { Deployment, TEAM_KEYS } from '../support/deployment.ts';
import { exampleServer } from '../support/fleet.ts';

const KiB = 1024;
const MAX_RESULT = 256 * KiB;
/** The job around its one call: ids, request, summary, timestamps, attempts (all small). */
const JOB_ENVELOPE_BYTES = 8 * KiB;

/**
 * What `GET /v1/jobs/:id` tells about a call: its result once (not its content and the same text
 * again), and the attempts a retried call took, each with its own times.
 */
describe('the job view of a call', () => {
  let deployment: Deployment;
  let alpha: ApiClient;

  beforeAll(async () => {
    deployment = new Deployment('job-view-calls', () => ({
      hostile: exampleServer('hostile', {
        timeoutMs: 20_000,
        maxResultBytes: MAX_RESULT,
        retry: { attempts: 1 },
      }),
      // hang_once times out once, then answers its retry (readOnlyHint, trusted: idempotent).
      slow: exampleServer('slow', {
        trusted: true,
        timeoutMs: 1_500,
        retry: { attempts: 2, backoffMs: 400 },
      }),
    }));
    await deployment.startWorker({ id: 'w-view' });
    alpha = (await deployment.startOrchestrator('o-view')).api('alpha');
  });

  afterAll(async () => {
    await deployment?.close();
  });

  const runBatch = async (tool: string, args: Record<string, unknown>): Promise<string> => {
    const submitted = await alpha.submit({ kind: 'batch', calls: [{ tool, arguments: args }] });
    expect(submitted.status, JSON.stringify(submitted.body)).toBe(201);
    await alpha.finished(submitted.body.id, 90_000);
    return submitted.body.id;
  };

  it('sends a capped 9 × 1 MB text result once: within maxResultBytes plus the envelopes', async () => {
    const id = await runBatch('hostile__text_blocks', { count: 9, bytes: 1_000_000 });
    const response = await fetch(`${alpha.baseUrl}/v1/jobs/${id}`, {
      headers: { authorization: `Bearer ${TEAM_KEYS.alpha}` },
    });
    expect(response.status).toBe(200);
    const raw = Buffer.from(await response.arrayBuffer());
    const wire: Json = JSON.parse(raw.toString('utf8'));
    expect(wire.toolCalls[0].outcome).toMatchObject({ status: 'ok', truncated: true });
    // The content says it; the text the model read is not sent a second time.
    expect(wire.toolCalls[0].outcome.text).toBeUndefined();
    expect(raw.byteLength).toBeLessThanOrEqual(MAX_RESULT + OUTCOME_ENVELOPE_BYTES + JOB_ENVELOPE_BYTES);
    // The typed client fills the text in from the content, as the model saw it.
    const job: Json = await alpha.job(id);
    expect(job.toolCalls[0].outcome.text.startsWith('hostile-blob-')).toBe(true);
    expect(job.toolCalls[0].outcome.text).toMatch(/\[switchyard: result truncated/);
  });

  it('lists each attempt of a retried call, so its queue wait is not the retries', async () => {
    const id = await runBatch('slow__hang_once', { key: 'retried' });
    const job: Json = await alpha.job(id);
    const [call] = job.toolCalls;
    expect(call.outcome, JSON.stringify(call)).toMatchObject({ status: 'ok', attempts: 2 });
    expect(call.state).toBe('ok');
    expect(call.attempts).toEqual([
      expect.objectContaining({ attempt: 1, workerId: 'w-view', error: expect.any(String) }),
      expect.objectContaining({ attempt: 2, workerId: 'w-view', error: null }),
    ]);
    const [first, second] = call.attempts;
    const t = (iso: string) => Date.parse(iso);
    expect(t(first.pickedUpAt)).toBeGreaterThanOrEqual(t(call.dispatchedAt));
    expect(t(first.finishedAt) - t(first.startedAt)).toBeGreaterThanOrEqual(1_500); // the timeout
    expect(t(second.pickedUpAt)).toBeGreaterThanOrEqual(t(first.finishedAt)); // backoff between
    expect(t(second.finishedAt)).toBeLessThanOrEqual(t(call.finishedAt));
  });
});
