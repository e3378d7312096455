import { readLedger } from '@switchyard/example-mcp-servers/ledger';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Json } from '../support/api-client.ts';
import { Deployment } from '../support/deployment.ts';
import { exampleServer } from '../support/fleet.ts';
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
    }));
    Object.assign(deployment.processEnv, {
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
      OTEL_BSP_SCHEDULE_DELAY: '100',
      JAEGER_UI_URL: 'http://jaeger.example:16686/',
    });
    // Two worker processes, each serving one of the servers the job calls.
    await Promise.all([
      deployment.startWorker({ id: 'w-search', servers: ['search'] }),
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

function ancestors(
  span: ReceivedSpan,
  parentOf: (span: ReceivedSpan) => ReceivedSpan | undefined,
): ReceivedSpan[] {
  const chain: ReceivedSpan[] = [];
  for (let current = parentOf(span); current; current = parentOf(current)) chain.push(current);
  return chain;
}
