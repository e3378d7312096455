import { readLedger } from '@switchyard/example-mcp-servers/ledger';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Json } from '../support/api-client.ts';
import { Deployment, TEAM_KEYS } from '../support/deployment.ts';
import { exampleServer } from '../support/fleet.ts';
import { connectGateway } from '../support/mcp-clients.ts';
import { OtlpReceiver, type ReceivedSpan } from '../support/otlp-receiver.ts';

const SPAN_KIND = { INTERNAL: 1, SERVER: 2, CLIENT: 3, PRODUCER: 4, CONSUMER: 5 };

/**
 * One trace per job (issue 4): the HTTP request, the agent run, its model and tools steps, each tool
 * call's enqueue, the worker's processing in another process, and the MCP call — and the MCP server
 * itself receives the same trace in `_meta.traceparent`.
 */
describe('one trace per job', () => {
  let deployment: Deployment;
  const receiver = new OtlpReceiver();

  beforeAll(async () => {
    await receiver.start();
    deployment = new Deployment('tracing', (dir) => ({
      search: exampleServer('search', { trusted: true, env: { SEARCH_LEDGER: `${dir}/search.jsonl` } }),
      recorder: exampleServer('recorder', {
        idempotent: ['record'],
        env: { RECORDER_LEDGER: `${dir}/recorder.jsonl` },
      }),
      // `hang` never answers: the call times out after 500 ms (not idempotent, so it is not retried).
      slow: exampleServer('slow', { timeoutMs: 500 }),
    }));
    Object.assign(deployment.processEnv, {
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
      OTEL_BSP_SCHEDULE_DELAY: '100',
      JAEGER_UI_URL: 'http://jaeger.example:16686/',
    });
    // Two worker processes, each serving one of the servers the job calls.
    await Promise.all([
      deployment.startWorker({ id: 'w-search', servers: ['search', 'slow'] }),
      deployment.startWorker({ id: 'w-recorder', servers: ['recorder'] }),
    ]);
    await deployment.startOrchestrator('o-trace');
  });

  afterAll(async () => {
    await deployment?.close();
    await receiver.stop();
  });

  it('links request → run → steps → enqueue → worker → MCP call, across processes, into one trace', async () => {
    const api = deployment.api('alpha');
    const submitted = await api.submit({
      kind: 'agent',
      input: 'trace me',
      model: {
        provider: 'scripted',
        script: [
          {
            toolCalls: [
              { id: 'find', tool: 'search__search', arguments: { query: 'tracing' } },
              { id: 'note', tool: 'recorder__record', arguments: { ms: 5, label: 'traced' } },
            ],
          },
          { final: 'traced' },
        ],
      },
    });
    const job: Json = await api.finished(submitted.body.id);
    expect(job.status).toBe('succeeded');
    const traceId: string = job.traceId;
    expect(job.traceUrl).toBe(`http://jaeger.example:16686/trace/${traceId}`);

    const spans = await receiver.waitFor(
      traceId,
      (received) =>
        received.filter((span) => span.name.startsWith('tools/call ')).length === 2 &&
        received.filter((span) => span.name.startsWith('chat ')).length === 2 &&
        received.some((span) => span.kind === SPAN_KIND.SERVER),
    );
    const byId = new Map(spans.map((span) => [span.spanId, span]));
    const parentOf = (span: ReceivedSpan) => (span.parentSpanId ? byId.get(span.parentSpanId) : undefined);
    const one = (predicate: (span: ReceivedSpan) => boolean, what: string) => {
      const found = spans.filter(predicate);
      expect(found, what).toHaveLength(1);
      return found[0] as ReceivedSpan;
    };

    const request = one((span) => span.kind === SPAN_KIND.SERVER, 'HTTP server span');
    expect(request).toMatchObject({ name: 'POST /v1/jobs', attributes: { 'http.route': '/v1/jobs' } });
    expect(request.service).toBe('switchyard-orchestrator');
    const run = one((span) => span.name === 'invoke_agent switchyard', 'agent run span');
    expect(parentOf(run)).toBe(request);
    const chats = spans.filter((span) => span.name === 'chat scripted');
    expect(chats).toHaveLength(2);
    for (const chat of chats) {
      expect(ancestors(chat, parentOf)).toContain(run);
      expect(chat.kind).toBe(SPAN_KIND.CLIENT);
      expect(chat.attributes).toMatchObject({
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': 'scripted',
      });
    }
    const tools = one((span) => span.name === 'tools', 'tools node span');
    expect(ancestors(tools, parentOf)).toContain(run);

    for (const [callId, server, tool, worker] of [
      ['find', 'search', 'search', 'w-search'],
      ['note', 'recorder', 'record', 'w-recorder'],
    ] as const) {
      const execute = one(
        (span) => span.attributes['gen_ai.tool.call.id'] === callId,
        `execute_tool ${callId}`,
      );
      expect(parentOf(execute)).toBe(tools);
      const send = one((span) => span.name === `send tools.{${server}}`, `send ${server}`);
      expect(send.kind).toBe(SPAN_KIND.PRODUCER);
      expect(parentOf(send)).toBe(execute);
      const processing = one((span) => span.name === `process tools.{${server}}`, `process ${server}`);
      expect(processing).toMatchObject({ kind: SPAN_KIND.CONSUMER, service: 'switchyard-tool-worker' });
      expect(parentOf(processing)).toBe(send);
      const mcp = one((span) => span.name === `tools/call ${tool}`, `tools/call ${tool}`);
      expect(mcp.kind).toBe(SPAN_KIND.CLIENT);
      expect(parentOf(mcp)).toBe(processing);
      expect(mcp.attributes).toMatchObject({
        'mcp.method.name': 'tools/call',
        'gen_ai.tool.name': tool,
        'switchyard.server': server,
        'network.transport': 'pipe',
      });
      expect(processing.attributes).toMatchObject({
        'switchyard.outcome.status': 'ok',
        'switchyard.attempts': 1,
      });
      expect(job.toolCalls.find((call: Json) => call.id === callId)?.outcome.workerId).toBe(worker);
    }
    // The two calls were processed by two different worker processes.
    const workerPids = new Set(
      spans.filter((span) => span.name.startsWith('process ')).map((span) => span.pid),
    );
    expect(workerPids.size).toBe(2);

    // Log lines written inside spans carry the trace and the span they were written in.
    const workerLog = deployment.group.processes
      .flatMap((proc) => proc.logs)
      .find((log) => log.msg === 'tool call finished' && log.tool === 'search');
    const searchProcessing = one((span) => span.name === 'process tools.{search}', 'process search');
    expect(workerLog).toMatchObject({ trace_id: traceId, span_id: searchProcessing.spanId });
    const runLog = deployment.group.processes
      .flatMap((proc) => proc.logs)
      .find((log) => log.msg === 'run started' && log.job_id === job.id);
    expect(runLog).toMatchObject({ trace_id: traceId, span_id: run.spanId });

    // The MCP server got the MCP span's context in _meta.traceparent: it can join the same trace.
    const mcpSearch = one((span) => span.name === 'tools/call search', 'tools/call search');
    const [received] = readLedger(deployment.path('search.jsonl'));
    expect(received?.traceparent).toBe(`00-${traceId}-${mcpSearch.spanId}-01`);
  });
});

/** Status codes of OTLP spans. */
const STATUS = { UNSET: 0, OK: 1, ERROR: 2 };

describe('traces flag failed calls', () => {
  let deployment: Deployment;
  let gatewayUrl: string;
  const receiver = new OtlpReceiver();

  beforeAll(async () => {
    await receiver.start();
    deployment = new Deployment('tracing-errors', (dir) => ({
      search: exampleServer('search', { trusted: true, env: { SEARCH_LEDGER: `${dir}/search.jsonl` } }),
      // `hang` never answers: the call times out after 500 ms (not idempotent, so it is not retried).
      slow: exampleServer('slow', { timeoutMs: 500 }),
    }));
    Object.assign(deployment.processEnv, {
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
      OTEL_BSP_SCHEDULE_DELAY: '100',
    });
    await deployment.startWorker({ id: 'w-errors', servers: ['search', 'slow'] });
    gatewayUrl = (await deployment.startOrchestrator('o-errors')).url;
  });

  afterAll(async () => {
    await deployment?.close();
    await receiver.stop();
  });

  it('marks every span of a failed call ERROR with error.type = its outcome, and an ok call not (batch job)', async () => {
    const api = deployment.api('alpha');
    const submitted = await api.submit({
      kind: 'batch',
      calls: [
        { tool: 'search__search', arguments: { query: 'tracing' } },
        { tool: 'search__get_document', arguments: { id: 'no-such-document' } },
        { tool: 'slow__hang', arguments: {} },
        { tool: 'search__search', arguments: { query: '' } },
      ],
    });
    expect(submitted.status).toBe(201);
    const job: Json = await api.finished(submitted.body.id);
    expect(job.status).toBe('completed_with_errors');
    const statusOf = (id: string) => job.toolCalls.find((call: Json) => call.id === id)?.outcome.status;
    expect([1, 2, 3, 4].map((n) => statusOf(`call-${n}`))).toEqual([
      'ok',
      'tool_error',
      'timeout',
      'invalid_arguments',
    ]);

    // Three calls reach a worker: each has its execute_tool, send, process and tools/call spans.
    const spans = await receiver.waitFor(
      job.traceId,
      (received) =>
        received.filter((span) => span.name.startsWith('tools/call ')).length === 3 &&
        received.filter((span) => span.name.startsWith('send ')).length === 3 &&
        received.filter((span) => span.name.startsWith('execute_tool ')).length === 4 &&
        received.some((span) => span.name === 'run_batch switchyard'),
    );
    const tree = new SpanTree(spans);
    const run = tree.one((span) => span.name === 'run_batch switchyard', 'run span');
    expect(run.status.code).toBe(STATUS.ERROR);
    expect(['tool_error', 'timeout', 'invalid_arguments']).toContain(run.attributes['error.type']);
    for (const failed of ['call-2 tool_error', 'call-3 timeout', 'call-4 invalid_arguments']) {
      expect(run.status.message).toContain(failed);
    }

    const pathOf = (callId: string) => {
      const execute = tree.one((span) => span.attributes['gen_ai.tool.call.id'] === callId, callId);
      expect(tree.parentOf(execute)?.spanId).toBe(run.spanId);
      return [execute, ...tree.descendants(execute)];
    };
    // call-1: ok, at every hop.
    const okPath = pathOf('call-1');
    expect(okPath.map((span) => span.name)).toEqual([
      'execute_tool search__search',
      'send tools.{search}',
      'process tools.{search}',
      'tools/call search',
    ]);
    for (const span of okPath) {
      expect([STATUS.UNSET, STATUS.OK], span.name).toContain(span.status.code);
      expect(span.attributes['error.type'], span.name).toBeUndefined();
    }
    // call-2 (the tool's own isError) and call-3 (a timeout) fail at every hop, orchestrator and worker.
    for (const [callId, status, server, tool] of [
      ['call-2', 'tool_error', 'search', 'get_document'],
      ['call-3', 'timeout', 'slow', 'hang'],
    ] as const) {
      const path = pathOf(callId);
      expect(path.map((span) => span.name)).toEqual([
        `execute_tool ${server}__${tool}`,
        `send tools.{${server}}`,
        `process tools.{${server}}`,
        `tools/call ${tool}`,
      ]);
      for (const span of path) {
        expect(span.status.code, `${callId} ${span.name}`).toBe(STATUS.ERROR);
        expect(span.attributes['error.type'], `${callId} ${span.name}`).toBe(status);
        expect(span.status.message, `${callId} ${span.name}`).toMatch(new RegExp(`^${status}`));
      }
    }
    // call-4: refused by the orchestrator before it was queued: its execute_tool span is the whole path.
    const refused = pathOf('call-4');
    expect(refused.map((span) => span.name)).toEqual(['execute_tool search__search']);
    expect(refused[0]).toMatchObject({
      status: { code: STATUS.ERROR },
      attributes: { 'error.type': 'invalid_arguments' },
    });

    // The MCP client spans name the protocol revision their session negotiated (stdio: no session id).
    for (const mcp of spans.filter((span) => span.name.startsWith('tools/call '))) {
      expect(mcp.attributes['mcp.protocol.version'], mcp.name).toMatch(/^\d{4}-\d{2}-\d{2}$/);
      expect(mcp.attributes['mcp.session.id'], mcp.name).toBeUndefined();
    }

    // PostgreSQL queries are folded into their parents by default: counted there, not exported.
    expect(spans.filter((span) => span.name.startsWith('pg.'))).toHaveLength(0);
    const counted = spans.filter((span) => typeof span.attributes['switchyard.pg.queries'] === 'number');
    expect(counted.length).toBeGreaterThan(0);
    expect(spans.length).toBeLessThanOrEqual(MAX_BATCH_TRACE_SPANS);
  });

  it('marks the /mcp request and the worker spans of a call that fails through the gateway', async () => {
    const client = await connectGateway(gatewayUrl, TEAM_KEYS.alpha, '2026-07-28');
    try {
      const answer = await client.callTool({ name: 'slow__hang', arguments: {} });
      expect(answer.isError).toBe(true);
    } finally {
      await client.close();
    }
    const request = await receiver.first((span) => span.name === 'mcp tools/call slow__hang');
    const spans = await receiver.waitFor(request.traceId, (received) =>
      received.some((span) => span.name === 'tools/call hang'),
    );
    const tree = new SpanTree(spans);
    const gatewaySpan = tree.one((span) => span.name === 'mcp tools/call slow__hang', 'gateway span');
    const path = [gatewaySpan, ...tree.descendants(gatewaySpan)];
    expect(path.map((span) => span.name)).toEqual([
      'mcp tools/call slow__hang',
      'execute_tool slow__hang',
      'send tools.{slow}',
      'process tools.{slow}',
      'tools/call hang',
    ]);
    for (const span of path) {
      expect(span.status.code, span.name).toBe(STATUS.ERROR);
      expect(span.attributes['error.type'], span.name).toBe('timeout');
    }
  });
});

describe('traces with SWITCHYARD_TRACE_PG_QUERIES=all', () => {
  let deployment: Deployment;
  const receiver = new OtlpReceiver();

  beforeAll(async () => {
    await receiver.start();
    deployment = new Deployment('tracing-pg', () => ({ search: exampleServer('search', { trusted: true }) }));
    Object.assign(deployment.processEnv, {
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
      OTEL_BSP_SCHEDULE_DELAY: '100',
      SWITCHYARD_TRACE_PG_QUERIES: 'all',
    });
    await deployment.startWorker({ id: 'w-pg', servers: ['search'] });
    await deployment.startOrchestrator('o-pg');
  });

  afterAll(async () => {
    await deployment?.close();
    await receiver.stop();
  });

  it('keeps every PostgreSQL query span', async () => {
    const api = deployment.api('alpha');
    const submitted = await api.submit({
      kind: 'batch',
      calls: [{ tool: 'search__search', arguments: { query: 'tracing' } }],
    });
    const job: Json = await api.finished(submitted.body.id);
    expect(job.status).toBe('succeeded');
    const spans = await receiver.waitFor(
      job.traceId,
      (received) =>
        received.some((span) => span.name === 'tools/call search') &&
        received.some((span) => span.name === 'run_batch switchyard'),
    );
    const queries = spans.filter((span) => span.name.startsWith('pg.query'));
    // A one-call batch job makes ~17 queries (storing the job, its call, outcome and events).
    expect(queries.length).toBeGreaterThan(5);
    for (const query of queries) expect(query.parentSpanId, query.name).toBeDefined();
    expect(spans.some((span) => span.attributes['switchyard.pg.queries'] !== undefined)).toBe(false);
  });
});

/**
 * At most this many spans in the trace of the 4-call batch job above with query spans folded: the call
 * spans (4 execute_tool, 3 × send/process/tools/call), the request and the run, and some slack for HTTP
 * client spans.
 */
const MAX_BATCH_TRACE_SPANS = 20;

/** The spans of one trace, walked by their parent links. */
class SpanTree {
  private readonly byId: Map<string, ReceivedSpan>;

  constructor(private readonly spans: ReceivedSpan[]) {
    this.byId = new Map(spans.map((span) => [span.spanId, span]));
  }

  parentOf(span: ReceivedSpan): ReceivedSpan | undefined {
    return span.parentSpanId ? this.byId.get(span.parentSpanId) : undefined;
  }

  one(predicate: (span: ReceivedSpan) => boolean, what: string): ReceivedSpan {
    const found = this.spans.filter(predicate);
    expect(found, what).toHaveLength(1);
    return found[0] as ReceivedSpan;
  }

  /** `span`'s descendants, depth first, children by start time. */
  descendants(span: ReceivedSpan): ReceivedSpan[] {
    const children = this.spans
      .filter((child) => child.parentSpanId === span.spanId)
      .sort((a, b) => a.startMs - b.startMs);
    return children.flatMap((child) => [child, ...this.descendants(child)]);
  }
}

function ancestors(
  span: ReceivedSpan,
  parentOf: (span: ReceivedSpan) => ReceivedSpan | undefined,
): ReceivedSpan[] {
  const chain: ReceivedSpan[] = [];
  for (let current = parentOf(span); current; current = parentOf(current)) chain.push(current);
  return chain;
}
