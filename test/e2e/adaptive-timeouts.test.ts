import type { ToolCallOutcome } from '@switchyard/contracts';
import type { ToolCallDispatcher } from '@switchyard/orchestrator/dispatch';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Json } from '../support/api-client.ts';
import { Deployment } from '../support/deployment.ts';
import { exampleServer } from '../support/fleet.ts';
import { waitForLedger } from '../support/ledger.ts';
import type { TestProcess } from '../support/processes.ts';

/** The configured start: what every call gets until the fleet has seen enough of them. */
const START_MS = 8_000;
const MIN_MS = 500;
const WINDOW = 10;

/**
 * Adaptive per-attempt timeouts (docs/semantics.md §6) with a real worker, the slow example server (its
 * `sleep` tool's latency is its argument, so the test shifts it at will) and the orchestrator's
 * /v1/servers: the timeout starts at timeoutMs, learns clamp(1.5 × P95) from successful calls, follows a
 * latency shift within the window, cuts a hanging call at the learned value, is shared by the fleet (a new
 * worker starts from it), and every timeout text names
 * the limit that actually fired.
 */
describe('adaptive timeouts', () => {
  let deployment: Deployment;
  let dispatcher: ToolCallDispatcher;
  let worker: TestProcess;
  let workerUrl: string;
  let call = 0;
  let lastSleepTimeoutMs = 0;
  const request = (server: string, tool: string, args: Record<string, unknown>) =>
    dispatcher.dispatch({ jobId: 'adaptive', toolCallId: `call-${++call}`, server, tool, arguments: args });
  const sleeps = async (count: number, ms: number): Promise<ToolCallOutcome[]> => {
    const outcomes: ToolCallOutcome[] = [];
    // One at a time: each call's timeout is derived from the samples of the calls before it.
    for (let index = 0; index < count; index++) outcomes.push(await request('adaptive', 'sleep', { ms }));
    return outcomes;
  };
  const timeoutsOf = async (server: string): Promise<Json> => {
    const response = await deployment.api('operator').request('GET', '/v1/servers');
    expect(response.status).toBe(200);
    return response.body.servers.find((entry: Json) => entry.name === server).timeouts;
  };

  beforeAll(async () => {
    deployment = new Deployment('adaptive', (dir) => ({
      adaptive: exampleServer('slow', {
        env: { SLOW_LEDGER: `${dir}/adaptive.jsonl` },
        timeoutMs: START_MS,
        maxTimeoutMs: 20_000,
        retry: { attempts: 1 },
        timeouts: 'adaptive',
        // minMs above the later 400 ms: a latency that jumps past the current timeout could not be
        // learned from successes (docs/semantics.md §6 says how windowMs bounds that).
        adaptiveTimeouts: { factor: 1.5, minMs: MIN_MS, minSamples: 5, windowSamples: WINDOW },
      }),
      // Static: progress extends its 300 ms per-attempt timeout up to the 1200 ms total limit.
      capped: exampleServer('slow', {
        env: { SLOW_LEDGER: `${dir}/capped.jsonl` },
        timeoutMs: 300,
        maxTimeoutMs: 1_200,
        retry: { attempts: 1 },
      }),
    }));
    worker = await deployment.startWorker({ id: 'w-first' });
    const listening = await worker.waitFor((log) => log.msg === 'worker http listening', 'worker http');
    workerUrl = `http://127.0.0.1:${listening.port}`;
    await deployment.startOrchestrator();
    dispatcher = await deployment.dispatcher();
  }, 180_000);

  afterAll(async () => {
    await deployment?.close();
  });

  it('starts at timeoutMs, then learns clamp(1.5 × P95) once minSamples calls succeeded', async () => {
    expect(await timeoutsOf('adaptive')).toMatchObject({
      mode: 'adaptive',
      maxTimeoutMs: 20_000,
      server: { timeoutMs: START_MS, basis: 'initial', samples: 0 },
    });
    const first = await sleeps(6, 50);
    expect(first.map((outcome) => outcome.status)).toEqual(Array(6).fill('ok'));
    // Calls 1–5 saw 0–4 samples (fewer than minSamples); call 6 saw five of about 50 ms: 1.5 × P95,
    // at least minMs (exactly minMs unless a loaded machine stretched a 50 ms call past 333 ms).
    expect(first.slice(0, 5).map((outcome) => outcome.timeoutMs)).toEqual(Array(5).fill(START_MS));
    expect(first[5]?.timeoutMs).toBeGreaterThanOrEqual(MIN_MS);
    expect(first[5]?.timeoutMs).toBeLessThan(START_MS);
    const view = await timeoutsOf('adaptive');
    const sleep = view.tools.sleep;
    expect(sleep).toMatchObject({ basis: 'tool', samples: 6 });
    expect(sleep.p95Ms).toBeGreaterThanOrEqual(50);
    expect(sleep.timeoutMs).toBe(Math.max(MIN_MS, Math.round(1.5 * sleep.p95Ms)));
    // hang has no samples of its own: it gets the server's (the same six calls).
    expect(view.tools.hang).toMatchObject({ timeoutMs: sleep.timeoutMs, basis: 'server', samples: 6 });
    // A team sees the same values for the tools it may call.
    const forTeam = (await deployment.api('alpha').request('GET', '/v1/servers')).body.servers;
    expect(forTeam.find((entry: Json) => entry.name === 'adaptive').timeouts).toEqual(view);
  });

  it('follows a shift from 50 ms to 400 ms within the window, and back', async () => {
    const slower = await sleeps(WINDOW, 400);
    expect(slower.map((outcome) => outcome.status)).toEqual(Array(WINDOW).fill('ok'));
    const view = await timeoutsOf('adaptive');
    const sleep = view.tools.sleep;
    expect(sleep).toMatchObject({ basis: 'tool', samples: WINDOW });
    expect(sleep.p95Ms).toBeGreaterThanOrEqual(400);
    expect(sleep.timeoutMs).toBe(Math.round(1.5 * sleep.p95Ms));
    // Converged inside the window: the last call already ran under 1.5 × a P95 of the new latency.
    const last = slower.at(-1)?.timeoutMs ?? 0;
    expect(last).toBeGreaterThanOrEqual(600);
    expect(last).toBeLessThan(START_MS);

    // A window of fast calls forgets the slow ones.
    const faster = await sleeps(WINDOW + 1, 50);
    const back = (await timeoutsOf('adaptive')).tools.sleep;
    expect(back.p95Ms).toBeLessThan(400);
    expect(back.timeoutMs).toBe(Math.max(MIN_MS, Math.round(1.5 * back.p95Ms)));
    expect(faster.at(-1)?.timeoutMs).toBeLessThan(last);
    lastSleepTimeoutMs = faster.at(-1)?.timeoutMs ?? 0;
  });

  it('cuts a hanging call at the adaptive value, not at timeoutMs, and says so', async () => {
    const expected = (await timeoutsOf('adaptive')).tools.hang;
    expect(expected.basis).toBe('server');
    expect(expected.timeoutMs).toBeLessThan(START_MS);
    const outcome = await request('adaptive', 'hang', {});
    expect(outcome).toMatchObject({
      status: 'timeout',
      executed: 'unknown',
      attempts: 1,
      timeoutMs: expected.timeoutMs,
    });
    expect(outcome.text).toContain(`did not finish within ${expected.timeoutMs} ms, its per-attempt timeout`);
    expect(outcome.text).toMatch(
      /\(adaptive: 1\.5 × the P95 \(\d+ ms\) of the server's last 10 successful calls, within 500–20000 ms;/,
    );
    expect(outcome.error).toBe(`timed out: per-attempt timeout ${expected.timeoutMs} ms (server) fired`);
    // The timeout's cancel reached the server.
    await waitForLedger(deployment.path('adaptive.jsonl'), (rows) =>
      rows.some((row) => row.tool === 'hang' && row.phase === 'cancelled'),
    );
    // A timed-out call teaches nothing: hang still has no samples of its own.
    expect((await timeoutsOf('adaptive')).tools.hang.basis).toBe('server');
  });

  it('names the total limit when progress kept a call alive past maxTimeoutMs', async () => {
    expect(await timeoutsOf('capped')).toEqual({
      mode: 'static',
      maxTimeoutMs: 1_200,
      server: { timeoutMs: 300, basis: 'static', samples: 0 },
    });
    const outcome = await request('capped', 'sleep', { ms: 10_000, progressEveryMs: 100 });
    expect(outcome).toMatchObject({ status: 'timeout', executed: 'unknown', timeoutMs: 300 });
    expect(outcome.text).toContain('did not finish within 1200 ms, its total limit (maxTimeoutMs');
    expect(outcome.text).not.toContain('300 ms');
    expect(outcome.error).toMatch(/^timed out: total limit maxTimeoutMs 1200 ms fired after \d+ ms$/);
    // The worker cancels the call itself (the SDK does not, when its total limit fires).
    await waitForLedger(deployment.path('capped.jsonl'), (rows) =>
      rows.some(
        (row) =>
          row.tool === 'sleep' &&
          row.phase === 'cancelled' &&
          String(row.reason).includes('the total limit (maxTimeoutMs 1200 ms) passed'),
      ),
    );
  });

  it('exports the per-attempt timeout of each tool as a worker metric', async () => {
    const body = await (await fetch(`${workerUrl}/metrics`)).text();
    expect(lastSleepTimeoutMs).toBeGreaterThanOrEqual(MIN_MS);
    expect(body).toContain(
      `switchyard_worker_tool_call_timeout_seconds{server="adaptive",tool="sleep"} ${lastSleepTimeoutMs / 1000}\n`,
    );
    expect(body).toMatch(
      /switchyard_worker_tool_call_timeout_seconds\{server="capped",tool="sleep"\} 0\.3\n/,
    );
  });

  it('is shared by the fleet: a worker that never ran a call starts from the learned value', async () => {
    const learned = (await timeoutsOf('adaptive')).tools.sleep;
    expect(learned.basis).toBe('tool');
    await deployment.startWorker({ id: 'w-second', servers: ['adaptive'] });
    await worker.stop();
    const outcome = await request('adaptive', 'sleep', { ms: 50 });
    expect(outcome).toMatchObject({ status: 'ok', workerId: 'w-second', timeoutMs: learned.timeoutMs });
    expect(outcome.timeoutMs).toBeLessThan(START_MS);
  });
});
