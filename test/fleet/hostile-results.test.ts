import { OUTCOME_ENVELOPE_BYTES, toolCallJobId, toolQueueName } from '@switchyard/contracts';
import type { ToolCallDispatcher } from '@switchyard/orchestrator/dispatch';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exampleServer, Fleet } from '../support/fleet.ts';

const MAX_RESULT = 64 * 1024;

/**
 * Issue 8 items 4 and 9: results whose bulk is not text (a huge `_meta`, annotations, structured
 * content, many blocks) are capped as a whole, and a result nested 5,000 deep is the server's answer
 * (a protocol/result error), never a transport error to retry.
 */
describe('hostile results', () => {
  let fleet: Fleet;
  let dispatcher: ToolCallDispatcher;

  beforeAll(async () => {
    fleet = new Fleet('hostile-results', () => ({
      hostile: exampleServer('hostile', {
        maxResultBytes: MAX_RESULT,
        // Idempotent with retries: a transport classification would show up as more attempts.
        idempotent: ['deep_structured', 'fat_result'],
        retry: { attempts: 3, backoffMs: 50 },
        timeoutMs: 20_000,
      }),
    }));
    await fleet.startWorker({ servers: ['hostile'] });
    dispatcher = await fleet.dispatcher();
  });

  afterAll(async () => {
    await fleet?.close();
  });

  const stored = new Map<string, Record<string, unknown>>();

  /** The outcome exactly as the worker stored it: the job's return value in Redis. */
  async function storedBytes(toolCallId: string): Promise<number> {
    const key = `${fleet.prefix}:${toolQueueName('hostile')}:${toolCallJobId('hostile', toolCallId)}`;
    const raw = await fleet.redis.hget(key, 'returnvalue');
    expect(raw, `return value of ${key}`).toBeTruthy();
    stored.set(toolCallId, JSON.parse(raw as string));
    return Buffer.byteLength(raw as string);
  }

  it('caps a result that is mostly _meta, annotations and structuredContent, and says what was cut', async () => {
    const outcome = await dispatcher.dispatch({
      jobId: 'hostile',
      toolCallId: 'fat',
      server: 'hostile',
      tool: 'fat_result',
      arguments: {},
    });
    expect(outcome).toMatchObject({ status: 'ok', executed: 'yes', attempts: 1, truncated: true });
    expect(outcome.text).toMatch(/_meta and annotations of 1 block\(s\) dropped/);
    expect(outcome.text).toMatch(/structuredContent dropped/);
    expect(outcome.text).toMatch(/block\(s\) dropped \(resource_link×\d+/);
    expect(await storedBytes('fat')).toBeLessThanOrEqual(MAX_RESULT + OUTCOME_ENVELOPE_BYTES);
    // The model's text is not stored beside the content it is made of.
    expect(stored.get('fat')).not.toHaveProperty('text');
    // The outcome stream carries the same capped JSON.
    const entries = (await fleet.redis.xrange(`${fleet.prefix}:outcomes`, '-', '+')) as Array<
      [string, string[]]
    >;
    const largest = Math.max(
      ...entries.map(([, fields]) => fields.reduce((sum, field) => sum + Buffer.byteLength(field), 0)),
    );
    expect(largest).toBeLessThanOrEqual(MAX_RESULT + OUTCOME_ENVELOPE_BYTES + 512);
  });

  it('reports structuredContent nested 5,000 deep as a result error of a call that ran, not retried', async () => {
    const outcome = await dispatcher.dispatch({
      jobId: 'hostile',
      toolCallId: 'deep',
      server: 'hostile',
      tool: 'deep_structured',
      arguments: { depth: 5_000 },
    });
    expect(outcome).toMatchObject({
      status: 'failed',
      executed: 'yes',
      attempts: 1,
      error: 'result_too_deep',
    });
    expect(await storedBytes('deep')).toBeLessThan(OUTCOME_ENVELOPE_BYTES);
  });
});
