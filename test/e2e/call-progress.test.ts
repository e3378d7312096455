import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiClient, SseEvent } from '../support/api-client.ts';
import { Deployment } from '../support/deployment.ts';
import { exampleServer } from '../support/fleet.ts';

const SLEEP_MS = 3_000;
const EVERY_MS = 100;

/**
 * A long call's MCP progress on its job's event stream (docs/semantics.md, *Events*): the slow server
 * reports every 100 ms, the stream carries `tool_call.progress` at most every 500 ms, rising, before the
 * call's outcome; replayed, only the newest per call is left. For batch and agent jobs, on either queue
 * backend (the worker relays over Redis pub/sub or PostgreSQL NOTIFY).
 */
describe('tool_call.progress on the job event stream', () => {
  let deployment: Deployment;
  let api: ApiClient;

  beforeAll(async () => {
    deployment = new Deployment('call-progress', () => ({ slow: exampleServer('slow', { trusted: true }) }));
    await deployment.startWorker();
    api = (await deployment.startOrchestrator()).api('alpha');
  });

  afterAll(async () => {
    await deployment?.close();
  });

  const sleep = { tool: 'slow__sleep', arguments: { ms: SLEEP_MS, progressEveryMs: EVERY_MS } };
  const bodies = {
    batch: { kind: 'batch', calls: [sleep] },
    agent: {
      kind: 'agent',
      input: 'Sleep.',
      model: {
        provider: 'scripted',
        script: [{ toolCalls: [{ id: 'c1', ...sleep }] }, { final: 'Slept.' }],
      },
    },
  };

  it.each(Object.entries(bodies))(
    'streams throttled, rising progress of a %s job before the outcome',
    async (_door, body) => {
      const submitted = await api.submit(body);
      expect(submitted.status).toBe(201);
      const id = String(submitted.body.id);
      const live = await api.events(id);
      expect(live.at(-1)?.data.status).toBe('succeeded');

      const dispatched = live.findIndex((event) => event.event === 'tool_call.dispatched');
      const finished = live.findIndex((event) => event.event === 'tool_call.finished');
      const callId = live[dispatched]?.data.id;
      const progress = live.filter((event) => event.event === 'tool_call.progress');
      // 30 notifications over 3 s: about one event per 500 ms, not one per notification.
      expect(progress.length).toBeGreaterThanOrEqual(4);
      expect(progress.length).toBeLessThanOrEqual(SLEEP_MS / 500 + 2);
      for (const event of progress) {
        const index = live.indexOf(event);
        expect(index).toBeGreaterThan(dispatched);
        expect(index).toBeLessThan(finished);
        expect(event.data).toMatchObject({
          toolCallId: callId,
          server: 'slow',
          tool: 'sleep',
          total: SLEEP_MS,
        });
        expect(event.data.message).toMatch(/^slept \d+ of 3000 ms$/);
      }
      const values = progress.map((event) => Number(event.data.progress));
      for (let index = 1; index < values.length; index += 1)
        expect(values[index]).toBeGreaterThan(values[index - 1] as number);
      // Every gap but the last (the held one stored when the outcome came) is a full interval; stored
      // times are PostgreSQL's, so a little slack for the statement's own time.
      const times = progress.map((event) => Date.parse(String(event.data.at)));
      for (let index = 1; index < times.length - 1; index += 1)
        expect((times[index] as number) - (times[index - 1] as number)).toBeGreaterThanOrEqual(450);

      // A watcher that reconnects (or comes late) replays only the newest progress of the call.
      const replayed = await api.events(id);
      const stored = replayed.filter((event: SseEvent) => event.event === 'tool_call.progress');
      expect(stored).toHaveLength(1);
      expect(stored[0]?.data.progress).toBe(values.at(-1));
      expect(replayed.indexOf(stored[0] as SseEvent)).toBeLessThan(
        replayed.findIndex((event) => event.event === 'tool_call.finished'),
      );
    },
  );
});
