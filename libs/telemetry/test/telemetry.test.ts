import { Writable } from 'node:stream';
import { context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ATTR, inSpan, traceFields } from '../src/index.ts';

const exporter = new InMemorySpanExporter();
const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
const tracer = provider.getTracer('telemetry-test');

beforeAll(() => {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
});
afterAll(async () => {
  context.disable();
  await provider.shutdown();
});

describe('inSpan', () => {
  it('makes the span active for the work and ends it', async () => {
    const seen = await inSpan(
      tracer,
      'unit of work',
      { attributes: { [ATTR.SERVER]: 'notes' } },
      async () => trace.getActiveSpan()?.spanContext().spanId,
    );
    const finished = exporter.getFinishedSpans().find((span) => span.name === 'unit of work');
    expect(finished?.spanContext().spanId).toBe(seen);
    expect(finished?.attributes[ATTR.SERVER]).toBe('notes');
  });

  it('marks a failed span with error.type and rethrows', async () => {
    await expect(
      inSpan(tracer, 'failing work', {}, async () => {
        throw new RangeError('out of range');
      }),
    ).rejects.toThrow('out of range');
    const finished = exporter.getFinishedSpans().find((span) => span.name === 'failing work');
    expect(finished?.attributes[ATTR.ERROR_TYPE]).toBe('RangeError');
    expect(finished?.status.code).toBe(2);
  });
});

describe('log lines inside a span', () => {
  it('carry the active trace and span ids', async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _encoding, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const log = pino({ mixin: traceFields }, sink);
    const ids = await inSpan(tracer, 'logged work', {}, async (span) => {
      log.info('inside');
      return span.spanContext();
    });
    log.info('outside');
    const [inside, outside] = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(inside).toMatchObject({ trace_id: ids.traceId, span_id: ids.spanId });
    expect(outside).not.toHaveProperty('trace_id');
  });
});
