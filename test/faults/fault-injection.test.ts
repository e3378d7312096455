import { redisKeys, WorkerHeartbeatSchema } from '@switchyard/contracts';
import { readLedger } from '@switchyard/example-mcp-servers/ledger';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiClient, Json } from '../support/api-client.ts';
import { Deployment, type Orchestrator } from '../support/deployment.ts';
import { exampleServer } from '../support/fleet.ts';
import { type Interval, recordedIntervals } from '../support/intervals.ts';
import { killAll, type TestProcess } from '../support/processes.ts';
import { DedicatedRedis } from '../support/redis-server.ts';

const BATCH_JOBS = 60;
const CALLS_PER_BATCH = 50;
const AGENT_JOBS = 12;
const CHAOS_ACTIONS = 16;

type Kind = 'serial' | 'pair' | 'note' | 'search';
interface PlannedCall {
  kind: Kind;
  tool: string;
  arguments: Record<string, unknown>;
}

/** Call i of job j: a deterministic mix of idempotent and non-idempotent calls over four servers. */
function plannedCall(job: number, index: number): PlannedCall {
  const label = `j${job}-c${index}`;
  switch ((job + index) % 4) {
    case 0:
      return { kind: 'serial', tool: 'rec-serial__record', arguments: { ms: 2, label } };
    case 1:
      return { kind: 'pair', tool: 'rec-pair__record', arguments: { ms: 4, label } };
    case 2:
      // Some writes are held open for a while, so a killed worker or server can catch one mid-call.
      return {
        kind: 'note',
        tool: 'notes__add_note',
        arguments: index % 8 === 2 ? { text: label, delayMs: 150 } : { text: label },
      };
    default:
      return { kind: 'search', tool: 'search__search', arguments: { query: `queue ${index}` } };
  }
}

function countBy(values: string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const value of values) counts[value] = (counts[value] ?? 0) + 1;
  return counts;
}

/** The largest number of intervals that were open at one instant. */
function maxConcurrent(intervals: Interval[]): number {
  const edges = intervals.flatMap((row) => [
    { at: row.start, delta: 1 },
    { at: row.end, delta: -1 },
  ]);
  edges.sort((a, b) => a.at - b.at || a.delta - b.delta);
  let open = 0;
  let peak = 0;
  for (const edge of edges) {
    open += edge.delta;
    peak = Math.max(peak, open);
  }
  return peak;
}

/**
 * Issue 5's fault-injection suite: a few thousand tool calls from many concurrent jobs while workers,
 * MCP server processes, an orchestrator replica and a dedicated Redis (AOF) are killed. Afterwards
 * every call has exactly one outcome, non-idempotent calls ran at most once and say so truthfully,
 * idempotent calls succeeded, servers never exceeded their concurrency and every job ended.
 */
describe('fault injection under mixed load', () => {
  const redis = new DedicatedRedis();
  let deployment: Deployment;
  const workers: TestProcess[] = [];
  const orchestrators: Orchestrator[] = [];
  const kills = { worker: 0, mcpServer: 0, orchestrator: 0, redis: 0 };

  beforeAll(async () => {
    await redis.start();
    const fast = {
      reconnect: { initialDelayMs: 100, maxDelayMs: 1_000 },
      health: { pingIntervalMs: 500, pingTimeoutMs: 1_000, failureThreshold: 2 },
      queueTimeoutMs: 300_000,
      retry: { attempts: 6, backoffMs: 100 },
    };
    deployment = new Deployment(
      'faults',
      (dir) => ({
        'rec-serial': exampleServer('recorder', {
          env: { RECORDER_LEDGER: `${dir}/serial.jsonl` },
          idempotent: ['record'],
          ...fast,
        }),
        'rec-pair': exampleServer('recorder', {
          env: { RECORDER_LEDGER: `${dir}/pair.jsonl` },
          idempotent: ['record'],
          concurrency: 2,
          ...fast,
        }),
        notes: exampleServer('notes', { env: { NOTES_LEDGER: `${dir}/notes.jsonl` }, ...fast }),
        search: exampleServer('search', { trusted: true, ...fast }),
      }),
      {
        redisUrl: redis.url,
        teams: { alpha: { apiKeys: ['alpha-key-0000000000000001'], maxConcurrentJobs: 500 } },
        orchestrator: { agentRunConcurrency: 100 },
      },
    );
    workers.push(...(await Promise.all(['w1', 'w2', 'w3'].map((id) => deployment.startWorker({ id })))));
    orchestrators.push(...(await Promise.all(['o1', 'o2'].map((id) => deployment.startOrchestrator(id)))));
  });

  afterAll(async () => {
    await deployment?.close().catch(() => undefined);
    await redis.stop();
  });

  it('keeps every promise under load while processes and Redis are killed', {
    timeout: 480_000,
  }, async () => {
    const api = (): ApiClient => (orchestrators.at(-1) as Orchestrator).api('alpha');
    const planned = new Map<string, PlannedCall[]>();

    // Submit: batches of 50 mixed calls, and agent jobs whose turns write notes and record.
    const submissions = await Promise.all([
      ...Array.from({ length: BATCH_JOBS }, async (_, job) => {
        const calls = Array.from({ length: CALLS_PER_BATCH }, (_, index) => plannedCall(job, index));
        const response = await api().submit({
          kind: 'batch',
          calls: calls.map(({ tool, arguments: args }) => ({ tool, arguments: args })),
        });
        expect(response.status, JSON.stringify(response.body)).toBe(201);
        planned.set(response.body.id, calls);
        return response.body.id as string;
      }),
      ...Array.from({ length: AGENT_JOBS }, async (_, agent) => {
        const job = BATCH_JOBS + agent;
        const turns = [0, 1, 2].map((turn) => [plannedCall(job, turn * 2), plannedCall(job, turn * 2 + 1)]);
        const response = await api().submit({
          kind: 'agent',
          input: 'work through the faults',
          model: {
            provider: 'scripted',
            script: [
              ...turns.map((calls) => ({
                toolCalls: calls.map(({ tool, arguments: args }) => ({ tool, arguments: args })),
              })),
              { final: 'done' },
            ],
          },
        });
        expect(response.status, JSON.stringify(response.body)).toBe(201);
        planned.set(response.body.id, turns.flat());
        return response.body.id as string;
      }),
    ]);

    // Chaos: a fixed, shuffled sequence of kills while the work is in flight.
    const kinds = ['worker', 'mcpServer', 'orchestrator', 'redis'] as const;
    const actions = Array.from(
      { length: CHAOS_ACTIONS },
      (_, index) => kinds[index % kinds.length] as (typeof kinds)[number],
    );
    actions.sort(() => Math.random() - 0.5);
    for (const action of actions) {
      switch (action) {
        case 'worker': {
          const victim = workers.splice(Math.floor(Math.random() * workers.length), 1)[0] as TestProcess;
          deployment.group.adopt(await victim.crash());
          workers.push(await deployment.startWorker({ id: `w-replacement-${kills.worker}` }));
          break;
        }
        case 'mcpServer': {
          const beats = Object.values(
            await deployment.redis.hgetall(redisKeys.workers(deployment.prefix)),
          ).map((raw) => WorkerHeartbeatSchema.parse(JSON.parse(raw)));
          const pids = beats.flatMap((beat) =>
            Object.values(beat.sessions).flatMap((session) => (session.pid ? [session.pid] : [])),
          );
          killAll([pids[Math.floor(Math.random() * pids.length)] as number]);
          break;
        }
        case 'orchestrator': {
          const victim = orchestrators.splice(
            Math.floor(Math.random() * orchestrators.length),
            1,
          )[0] as Orchestrator;
          await victim.process.crash();
          orchestrators.push(await deployment.startOrchestrator(`o-replacement-${kills.orchestrator}`));
          break;
        }
        case 'redis':
          await redis.crashAndRestart();
          break;
      }
      kills[action] += 1;
      // Let work progress between kills: wait for the next tool call to settle anywhere.
      await api()
        .events(
          submissions[Math.floor(Math.random() * submissions.length)] as string,
          (event) => event.event === 'tool_call.finished' || event.event === 'status',
          30_000,
        )
        .catch(() => undefined);
    }

    // Every job reaches a final status (read through a live replica's event stream).
    const jobs: Json[] = [];
    for (const id of submissions) jobs.push(await api().finished(id, 240_000));

    const outcomes = jobs.flatMap((job) => job.toolCalls.map((call: Json) => ({ job, call })));
    const byStatus: Record<string, number> = {};
    for (const { call } of outcomes)
      byStatus[call.outcome?.status ?? 'none'] = (byStatus[call.outcome?.status ?? 'none'] ?? 0) + 1;
    const noteStarts = new Map<string, number>();
    for (const row of readLedger(deployment.path('notes.jsonl'))) {
      if (row.phase === 'start')
        noteStarts.set(String(row.text), (noteStarts.get(String(row.text)) ?? 0) + 1);
    }
    const serial = recordedIntervals(deployment.path('serial.jsonl'));
    const pair = recordedIntervals(deployment.path('pair.jsonl'));
    console.info(
      JSON.stringify({
        jobs: jobs.length,
        calls: outcomes.length,
        kills,
        redisRestarts: redis.restarts,
        outcomesByStatus: byStatus,
        jobsByStatus: countBy(jobs.map((job) => String(job.status))),
        executionsByLedger: {
          notes: [...noteStarts.values()].reduce((a, b) => a + b, 0),
          serial: serial.length,
          pair: pair.length,
        },
        maxConcurrent: { 'rec-serial': maxConcurrent(serial), 'rec-pair': maxConcurrent(pair) },
      }),
    );

    // Every job ended, and agent jobs finished their script.
    for (const job of jobs) expect(['succeeded', 'failed', 'cancelled']).toContain(job.status);
    expect(jobs.filter((job) => job.status !== 'succeeded').map((job) => [job.id, job.error])).toEqual([]);
    // Every call has exactly one outcome: one record per planned call, each settled.
    for (const job of jobs) {
      const expected = planned.get(job.id) ?? [];
      const diagnosis = JSON.stringify({
        id: job.id,
        result: job.result,
        messages: job.messages?.map((message: Json) => [
          message.role,
          message.toolCalls?.length ?? 0,
          message.toolCallId ?? '',
        ]),
        logs: deployment.group.processes
          .flatMap((proc) => proc.logs.map((log): Json => ({ ...log, proc: proc.name })))
          .filter((log) => log.job_id === job.id)
          .map((log) => `${log.proc} ${log.msg} ${log.err ? JSON.stringify(log.err).slice(0, 300) : ''}`),
      });
      expect(job.toolCalls, diagnosis).toHaveLength(expected.length);
      expect(new Set(job.toolCalls.map((call: Json) => call.id)).size).toBe(expected.length);
      for (const call of job.toolCalls) expect(call.outcome, `${job.id}/${call.id}`).not.toBeNull();
    }
    // Non-idempotent writes ran at most once, and `executed` tells the truth about it.
    for (const { call } of outcomes.filter(({ call }) => call.tool === 'notes__add_note')) {
      const starts = noteStarts.get(String(call.arguments.text)) ?? 0;
      expect(starts, `note ${call.arguments.text}`).toBeLessThanOrEqual(1);
      if (call.outcome.executed === 'yes')
        expect(starts, `note ${call.arguments.text} reported executed`).toBe(1);
      if (call.outcome.executed === 'no')
        expect(starts, `note ${call.arguments.text} reported not executed`).toBe(0);
    }
    // Idempotent calls all ended ok: every server came back.
    const idempotentNotOk = outcomes
      .filter(({ call }) => call.tool !== 'notes__add_note' && call.outcome.status !== 'ok')
      .map(({ call }) => `${call.tool} ${call.outcome.status}: ${call.outcome.error}`);
    expect(idempotentNotOk).toEqual([]);
    // No server ever saw more calls at once than its concurrency.
    expect(maxConcurrent(serial)).toBeLessThanOrEqual(1);
    expect(maxConcurrent(pair)).toBeLessThanOrEqual(2);
    expect(kills.worker + kills.mcpServer + kills.orchestrator + kills.redis).toBe(CHAOS_ACTIONS);
  });
});
