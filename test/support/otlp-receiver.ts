import { createServer, type Server } from 'node:http';

/** A span as received over OTLP/HTTP JSON, flattened with its service. */
export interface ReceivedSpan {
  service: string;
  pid: number | undefined;
  traceId: string;
  spanId: string;
  parentSpanId: string | undefined;
  name: string;
  kind: number;
  attributes: Record<string, unknown>;
  /** OTLP status: code 0 UNSET, 1 OK, 2 ERROR, with the description an ERROR carries. */
  status: { code: number; message: string | undefined };
  /** Epoch milliseconds (fractional). */
  startMs: number;
  durationMs: number;
}

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
  doubleValue?: number;
}
interface OtlpAttribute {
  key: string;
  value: OtlpValue;
}
interface OtlpExport {
  resourceSpans?: Array<{
    resource?: { attributes?: OtlpAttribute[] };
    scopeSpans?: Array<{
      spans?: Array<{
        traceId: string;
        spanId: string;
        parentSpanId?: string;
        name: string;
        kind: number;
        attributes?: OtlpAttribute[];
        status?: { code?: number; message?: string };
        startTimeUnixNano?: string;
        endTimeUnixNano?: string;
      }>;
    }>;
  }>;
}

const plainValue = (value: OtlpValue): unknown =>
  value.stringValue ??
  (value.intValue !== undefined ? Number(value.intValue) : (value.boolValue ?? value.doubleValue));
const nanosToMs = (nanos: string | undefined) => (nanos ? Number(BigInt(nanos) / 1000n) / 1000 : 0);
const attributesOf = (list: OtlpAttribute[] = []) =>
  Object.fromEntries(list.map((entry) => [entry.key, plainValue(entry.value)]));

/**
 * An in-process OTLP/HTTP receiver (JSON encoding, what @opentelemetry/exporter-trace-otlp-http sends):
 * the processes under test export to it as they would to Jaeger.
 */
export class OtlpReceiver {
  readonly spans: ReceivedSpan[] = [];
  private readonly listeners = new Set<() => void>();
  private server: Server | undefined;
  endpoint = '';

  async start(): Promise<void> {
    this.server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        if (request.url === '/v1/traces')
          this.accept(JSON.parse(Buffer.concat(chunks).toString('utf8')) as OtlpExport);
        response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    const address = this.server.address();
    if (typeof address !== 'object' || !address) throw new Error('receiver has no address');
    this.endpoint = `http://127.0.0.1:${address.port}`;
  }

  async stop(): Promise<void> {
    await new Promise((resolve) => this.server?.close(resolve));
  }

  /** Resolves with the spans of `traceId` once `complete` says they are all there. */
  waitFor(
    traceId: string,
    complete: (spans: ReceivedSpan[]) => boolean,
    timeoutMs = 30_000,
  ): Promise<ReceivedSpan[]> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const spans = this.spans.filter((span) => span.traceId === traceId);
        if (complete(spans)) {
          done();
          resolve(spans);
        }
      };
      const timer = setTimeout(() => {
        done();
        const names = this.spans
          .filter((span) => span.traceId === traceId)
          .map((span) => `${span.service}:${span.name}`);
        reject(new Error(`trace ${traceId} incomplete after ${timeoutMs} ms: ${names.join(', ')}`));
      }, timeoutMs);
      const done = () => {
        clearTimeout(timer);
        this.listeners.delete(check);
      };
      this.listeners.add(check);
      check();
    });
  }

  /** Resolves with the first span `matches` accepts, received already or later. */
  first(matches: (span: ReceivedSpan) => boolean, timeoutMs = 30_000): Promise<ReceivedSpan> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const found = this.spans.find(matches);
        if (!found) return;
        done();
        resolve(found);
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`no matching span after ${timeoutMs} ms`));
      }, timeoutMs);
      const done = () => {
        clearTimeout(timer);
        this.listeners.delete(check);
      };
      this.listeners.add(check);
      check();
    });
  }

  private accept(payload: OtlpExport): void {
    for (const resourceSpans of payload.resourceSpans ?? []) {
      const resource = attributesOf(resourceSpans.resource?.attributes);
      for (const scope of resourceSpans.scopeSpans ?? []) {
        for (const span of scope.spans ?? []) {
          this.spans.push({
            service: String(resource['service.name']),
            pid: resource['process.pid'] as number | undefined,
            traceId: span.traceId,
            spanId: span.spanId,
            parentSpanId: span.parentSpanId || undefined,
            name: span.name,
            kind: span.kind,
            attributes: attributesOf(span.attributes),
            status: { code: span.status?.code ?? 0, message: span.status?.message || undefined },
            startMs: nanosToMs(span.startTimeUnixNano),
            durationMs: nanosToMs(span.endTimeUnixNano) - nanosToMs(span.startTimeUnixNano),
          });
        }
      }
    }
    for (const listener of this.listeners) listener();
  }
}
