import { Writable } from 'node:stream';
import { closeStore, openStore, parseConfig, type Store } from '@switchyard/contracts';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { AgentRunConsumer } from '../src/agent/runs/agent-run-consumer.ts';
import type { JobRunner } from '../src/agent/runs/job-runner.ts';
import { AgentRunQueue } from '../src/jobs/agent-run-queue.ts';
import type { InputStore } from '../src/jobs/input-store.ts';
import type { OrchestratorEnv } from '../src/runtime/orchestrator-env.ts';

const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const SKEW_MS = 400_000;

/** A pino logger whose lines a test can wait for. */
function capturedLog() {
  const lines: Array<Record<string, unknown>> = [];
  const waiters = new Set<() => void>();
  const stream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(JSON.parse(String(chunk)) as Record<string, unknown>);
      for (const waiter of [...waiters]) waiter();
      done();
    },
  });
  const until = (match: (line: Record<string, unknown>) => boolean, what: string) =>
    new Promise<Record<string, unknown>>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no log line: ${what}`)), 20_000);
      const check = () => {
        const found = lines.find(match);
        if (!found) return;
        clearTimeout(timer);
        waiters.delete(check);
        resolve(found);
      };
      waiters.add(check);
      check();
    });
  return { log: pino({ level: 'info' }, stream), lines, until };
}

/**
 * docs/postgres-backend.md §4 for agent runs: BullMQ's PostgreSQL locks are stamped and judged on each
 * replica's clock, so a replica whose clock is far from the database's takes no run (and runs no stalled
 * check) until its clock is back within a tenth of orchestrator.lockDurationMs. The skew is this process's
 * Date.now moved ahead; the database and BullMQ are real.
 */
describe('agent-run consumer on a skewed host (postgres)', () => {
  let store: Store;

  beforeAll(async () => {
    store = await openStore({
      choice: { backend: 'postgres', reason: 'test' },
      prefix: `t_runclock_${Math.random().toString(36).slice(2, 10)}`,
      redis: { url: '' },
      databaseUrl: DATABASE_URL,
      connectionName: 'switchyard-run-clock-test',
    });
  });

  afterAll(async () => {
    vi.restoreAllMocks();
    if (store?.kind === 'postgres') await store.pool.query(`DROP SCHEMA IF EXISTS ${store.schema} CASCADE`);
    if (store) await closeStore(store);
  });

  it('takes no run while its clock is off, and takes it once the clock is right', {
    timeout: 60_000,
  }, async () => {
    const config = parseConfig({
      servers: {},
      orchestrator: { lockDurationMs: 2_000, stalledIntervalMs: 250 },
    });
    const env = { prefix: store.prefix, replicaId: 'r-skewed' } as OrchestratorEnv;
    const started: string[] = [];
    let ran: (jobId: string) => void = () => undefined;
    const firstRun = new Promise<string>((resolve) => {
      ran = resolve;
    });
    const runner = {
      run: async (jobId: string) => {
        started.push(jobId);
        ran(jobId);
        return { parked: false };
      },
      giveUp: async () => undefined,
    } as unknown as JobRunner;
    const { log, until } = capturedLog();
    const realNow = Date.now.bind(Date);
    const skew = vi.spyOn(Date, 'now').mockImplementation(() => realNow() + SKEW_MS);
    const runs = new AgentRunQueue(store);
    const consumer = new AgentRunConsumer(runner, store, config, env, log, {} as InputStore);
    try {
      consumer.onApplicationBootstrap();
      const refused = await until(
        (line) => String(line.msg).startsWith('clock too far from PostgreSQL'),
        'the refusal',
      );
      expect(refused).toMatchObject({ limitMs: 200 });
      expect(Math.abs(Number(refused.offsetMs) + SKEW_MS)).toBeLessThan(1_000);

      await runs.enqueue('job_skewed');
      // Several stalled intervals and fetch rounds: a consuming Worker would have taken it long before.
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      expect(started).toEqual([]);
      expect(await runs.queue.getJobState('job_skewed')).toBe('waiting');

      // The clock set right; the next measurement (forced here rather than 30 s on) lets it run.
      skew.mockRestore();
      await (consumer as unknown as { clock: { sync(): Promise<unknown> } }).clock.sync();
      await until((line) => String(line.msg).startsWith('clock back within bounds of PostgreSQL'), 'resume');
      expect(await firstRun).toBe('job_skewed');
    } finally {
      skew.mockRestore();
      await consumer.onModuleDestroy();
      await runs.onModuleDestroy();
    }
  });
});
