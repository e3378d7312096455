export interface Doc {
  id: string;
  title: string;
  body: string;
}

/** A fixed corpus, so search results are deterministic across runs and processes. */
export const CORPUS: readonly Doc[] = [
  {
    id: 'queue-basics',
    title: 'Message queues in a nutshell',
    body: 'A message queue decouples producers from consumers. Producers enqueue jobs; workers dequeue and process them at their own pace, which smooths bursts of load.',
  },
  {
    id: 'queue-retries',
    title: 'Retries and backoff for queued jobs',
    body: 'Failed jobs are retried with exponential backoff and jitter. Cap the number of attempts and move exhausted jobs to a dead letter queue for inspection.',
  },
  {
    id: 'queue-idempotency',
    title: 'Idempotency keys and at-least-once delivery',
    body: 'Queues deliver at least once, so a job may run twice. Non-idempotent writes need an idempotency key or a ledger to detect duplicates before retrying.',
  },
  {
    id: 'queue-concurrency',
    title: 'Worker concurrency and fairness',
    body: 'Each worker processes several jobs concurrently. Per-queue concurrency limits protect slow downstream servers, and fair scheduling prevents one tenant from starving others.',
  },
  {
    id: 'queue-stalled',
    title: 'Stalled jobs and lock renewal',
    body: 'A worker holds a lock on the job it processes and renews it periodically. If the worker crashes the lock expires and the job is considered stalled and retried.',
  },
  {
    id: 'mcp-overview',
    title: 'What the Model Context Protocol is',
    body: 'MCP lets AI applications discover and call tools, read resources and use prompts exposed by servers, over JSON-RPC on stdio or Streamable HTTP transports.',
  },
  {
    id: 'mcp-tools',
    title: 'MCP tools, schemas and annotations',
    body: 'A tool declares an input schema and optionally an output schema. Annotations such as readOnlyHint, idempotentHint and destructiveHint describe its side effects to clients.',
  },
  {
    id: 'mcp-sessions',
    title: 'MCP sessions over Streamable HTTP',
    body: 'A Streamable HTTP server assigns a session id at initialize and the client sends it in the mcp-session-id header on every later request. Keeping sessions warm avoids handshake latency.',
  },
  {
    id: 'mcp-progress',
    title: 'Progress notifications and cancellation in MCP',
    body: 'A request carrying a progress token may receive progress notifications. Either side can cancel an in-flight request with a cancelled notification; the server should stop work.',
  },
  {
    id: 'mcp-stdio',
    title: 'Running MCP servers over stdio',
    body: 'With the stdio transport the client spawns the server as a child process and exchanges newline-delimited JSON-RPC messages on stdin and stdout; logs go to stderr.',
  },
  {
    id: 'tracing-basics',
    title: 'Distributed tracing fundamentals',
    body: 'A trace is a tree of spans sharing a trace id. Each span records an operation with start and end times, attributes and a parent span, across process boundaries.',
  },
  {
    id: 'tracing-context',
    title: 'W3C trace context propagation',
    body: 'The traceparent header carries the version, trace id, parent span id and flags. Propagating it through queue jobs and MCP request metadata links the spans of one tool call.',
  },
  {
    id: 'tracing-sampling',
    title: 'Sampling traces without losing errors',
    body: 'Head sampling decides at the root span; tail sampling decides after the trace completes, so slow or failed traces can always be kept while routine ones are dropped.',
  },
  {
    id: 'tracing-queues',
    title: 'Tracing across message queues',
    body: 'When a job is enqueued, inject the trace context into the job data. The worker extracts it and starts a consumer span linked to the producer, so queue wait time becomes visible.',
  },
  {
    id: 'ops-timeouts',
    title: 'Timeouts, deadlines and heartbeats',
    body: 'Every remote call needs a deadline. Long tool calls report progress as a heartbeat, and a caller that gives up should cancel the call so the server stops working.',
  },
];
