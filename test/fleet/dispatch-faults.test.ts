import { randomUUID } from 'node:crypto';
import {
  connectRedis,
  parseConfig,
  primaries,
  type RedisConnection,
  redisKeys,
  redisStore,
  redisTargetFromEnv,
  type ToolCallJob,
  type ToolCallOutcome,
  toolCallJobId,
  toolQueueName,
} from '@switchyard/contracts';
import { CatalogReader } from '@switchyard/orchestrator/catalog';
import { ToolCallDispatcher } from '@switchyard/orchestrator/dispatch';
import { Worker } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, dropPrefix, REDIS_CLUSTER_NODES, REDIS_URL, uniquePrefix } from '../support/redis.ts';
import { announceStandInWorker, okOutcome } from '../support/stand-in-worker.ts';

const SERVER = 'quiet';

/** Resolves with the first error reported whose message contains `text`. */
function errorCollector() {
  const errors: Error[] = [];
  const waiters: Array<{ text: string; resolve: (error: Error) => void }> = [];
  return {
    errors,
    onError(error: unknown) {
      const reported = error as Error;
      errors.push(reported);
      for (const waiter of waiters.splice(0)) {
        if (reported.message.includes(waiter.text)) waiter.resolve(reported);
        else waiters.push(waiter);
      }
    },
    next(text: string): Promise<Error> {
      const found = errors.find((error) => error.message.includes(text));
      if (found) return Promise.resolve(found);
      return new Promise((resolve) => waiters.push({ text, resolve }));
    },
  };
}

/**
 * A finished job whose return value is not an outcome (another producer's job, a corrupted value)
 * used to be re-checked every reconcile round forever: the call never settled.
 */
describe('a finished job with an unreadable return value', () => {
  const prefix = uniquePrefix('unreadable');
  const redis = connect('switchyard-test-unreadable');
  const workerRedis = connect('switchyard-test-unreadable-worker');
  let worker: Worker | undefined;
  let dispatcher: ToolCallDispatcher | undefined;

  afterAll(async () => {
    await worker?.close();
    await dispatcher?.close();
    await dropPrefix(redis, prefix);
    await Promise.all([redis.quit(), workerRedis.quit()]);
  });

  it('settles failed with executed unknown and says why', { timeout: 30_000 }, async () => {
    const config = parseConfig({ servers: { [SERVER]: { command: 'true', queueTimeoutMs: 3_600_000 } } });
    await announceStandInWorker(redis, prefix, SERVER);
    // Completes the job with a value that is not an outcome, and announces nothing.
    worker = new Worker(toolQueueName(SERVER), async () => ({ answer: 42 }), {
      connection: workerRedis,
      prefix,
    });
    dispatcher = new ToolCallDispatcher({
      config,
      prefix,
      store: redisStore(redis, prefix),
      catalog: new CatalogReader(redisStore(redis, prefix), 0),
      reconcileEveryMs: 200,
    });
    await dispatcher.start();

    const outcome = await dispatcher.dispatch({
      jobId: 'unreadable',
      toolCallId: 'c1',
      server: SERVER,
      tool: 'anything',
      arguments: {},
    });
    expect(outcome).toMatchObject({ status: 'failed', executed: 'unknown', error: 'unreadable_outcome' });
    expect(outcome.text).toMatch(/recorded outcome is unreadable .*status/);
  });
});

/**
 * Reads of a call's job can fail after its add reached Redis. Made to fail for real: the dispatcher's
 * Redis user may not run HGETALL (BullMQ's getJob) while adds (Lua scripts) and stream reads work.
 */
describe('a dispatcher whose job reads fail', () => {
  const prefix = uniquePrefix('noread');
  const user = `sy-test-noread-${randomUUID().slice(0, 8)}`;
  const password = randomUUID();
  const redis = connect('switchyard-test-noread');
  const workerRedis = connect('switchyard-test-noread-worker');
  let restricted: RedisConnection | undefined;
  let worker: Worker | undefined;
  let dispatcher: ToolCallDispatcher | undefined;
  const reported = errorCollector();
  const config = parseConfig({ servers: { [SERVER]: { command: 'true', queueTimeoutMs: 3_600_000 } } });

  beforeAll(async () => {
    // ACL users are per node: on a cluster every primary needs it.
    for (const node of primaries(redis)) {
      await node.call('ACL', 'SETUSER', user, 'on', `>${password}`, '~*', '&*', '+@all', '-hgetall');
    }
    const withUser = new URL(REDIS_URL);
    withUser.username = user;
    withUser.password = password;
    restricted = connectRedis(
      redisTargetFromEnv({ REDIS_URL: withUser.href, REDIS_CLUSTER_NODES }),
      'switchyard-test-noread-dispatcher',
    );
    restricted.on('error', () => undefined);
    await announceStandInWorker(redis, prefix, SERVER);
    dispatcher = new ToolCallDispatcher({
      config,
      prefix,
      store: redisStore(restricted, prefix),
      // The catalog reads with HGETALL too; it is not what these tests break.
      catalog: new CatalogReader(redisStore(redis, prefix), 0),
      // Far away: the outcomes here come from notices, not from reconcile rounds.
      reconcileEveryMs: 3_600_000,
      onError: (error) => reported.onError(error),
    });
    await dispatcher.start();
  });

  afterAll(async () => {
    await worker?.close();
    await dispatcher?.close();
    await restricted?.quit().catch(() => undefined);
    for (const node of primaries(redis)) await node.call('ACL', 'DELUSER', user);
    await dropPrefix(redis, prefix);
    await Promise.all([redis.quit(), workerRedis.quit()]);
  });

  it('keeps waiting for a call whose state check failed after it was queued', {
    timeout: 60_000,
  }, async () => {
    // A real consumer runs the call and announces its outcome the way tool workers do.
    worker = new Worker<ToolCallJob, ToolCallOutcome>(toolQueueName(SERVER), async (job) => okOutcome(job), {
      connection: workerRedis,
      prefix,
    });
    worker.on('completed', (job, outcome) => {
      void redis.xadd(
        redisKeys.outcomes(prefix),
        '*',
        'queue',
        toolQueueName(SERVER),
        'id',
        String(job.id),
        'outcome',
        JSON.stringify(outcome),
      );
    });
    const outcome = await (dispatcher as ToolCallDispatcher).dispatch({
      jobId: 'noread',
      toolCallId: 'queued',
      server: SERVER,
      tool: 'anything',
      arguments: {},
    });
    // The old code settled this call `unavailable`, executed `no`, while the worker ran it.
    expect(outcome).toMatchObject({ status: 'ok', executed: 'yes', toolCallId: 'queued' });
    const failure = await reported.next('state check failed');
    expect(failure.message).toContain(`${SERVER}__anything (job noread, call queued`);
    expect(failure.message).toMatch(/NOPERM/);
  });

  it('reports a failed read after an outcome notice instead of leaving it unhandled', {
    timeout: 30_000,
  }, async () => {
    await worker?.close();
    worker = undefined;
    const dispatched = (dispatcher as ToolCallDispatcher).dispatch({
      jobId: 'noread',
      toolCallId: 'noticed',
      server: SERVER,
      tool: 'anything',
      arguments: {},
    });
    await reported.next('call noticed');
    // A notice without a readable outcome makes the dispatcher read the job, which fails.
    await redis.xadd(
      redisKeys.outcomes(prefix),
      '*',
      'queue',
      toolQueueName(SERVER),
      'id',
      toolCallJobId('noread', 'noticed'),
      'failedReason',
      'gone',
    );
    const failure = await reported.next('outcome notice');
    expect(failure.message).toContain('call noticed');
    expect(failure.message).toMatch(/NOPERM/);
    // Still waiting: a read that failed decides nothing about the call.
    const settled = await Promise.race([dispatched.then(() => true), Promise.resolve(false)]);
    expect(settled).toBe(false);
  });
});
