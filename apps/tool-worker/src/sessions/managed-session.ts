import { EventEmitter } from 'node:events';
import {
  type CallToolResult,
  Client,
  type FetchLike,
  LOG_LEVEL_META_KEY,
  type LoggingLevel,
  type ProgressCallback,
  type Request,
  SdkError,
  SdkErrorCode,
  type StandardSchemaV1,
  type Tool,
  type VersionNegotiationMode,
} from '@modelcontextprotocol/client';
import type { TaskEnabledSession } from '@modelcontextprotocol/ext-tasks/client';
import type { CatalogTool, ServerConfig, SessionState, SessionStatus } from '@switchyard/contracts';
import { backoffDelay } from '../runtime/backoff.ts';
import type { Logger } from '../runtime/logger.ts';
import { Semaphore } from '../runtime/semaphore.ts';
import { type LogHandler, SessionLogs } from './session-logs.ts';
import { ELICITATION_CAPABILITY, type QuestionHandler, SessionQuestions } from './session-questions.ts';
import { createTransport } from './session-transport.ts';
import { StderrTail } from './stderr-tail.ts';
import { watchStream } from './stream-watch.ts';
import { openTaskSession } from './task-session.ts';

export interface SessionEvents {
  state: [state: SessionState];
  tools: [tools: CatalogTool[]];
}

export interface CallOptions {
  timeoutMs: number;
  maxTotalTimeoutMs: number;
  signal?: AbortSignal;
  meta?: Record<string, string>;
  onprogress?: ProgressCallback;
  /**
   * Runs once this call holds the session's in-flight slot, right before the request is written:
   * the last moment to refuse sending (it throws), with no wait between it and the send.
   */
  beforeSend?: () => Promise<void>;
  /** Answers the server's `elicitation/create` while this call runs (session-questions.ts). */
  onQuestion?: QuestionHandler;
  /**
   * Hears the server's log messages while this call runs (session-logs.ts), asked for at `logLevel`:
   * on 2026-07-28 the request's `_meta` level (the server sends none without it); a 2025-11-25 server
   * sends what its session-wide level lets through (never set here, so its own default).
   */
  onLog?: LogHandler;
  logLevel?: LoggingLevel;
}

/** Raised when a call could not be sent because the session was not connected: it never ran. */
export class SessionNotReadyError extends Error {
  constructor(server: string, state: SessionState) {
    super(`session to server "${server}" is ${state}`);
    this.name = 'SessionNotReadyError';
  }
}

/** Why a session is down: `reason` for everyone, `stderrTail` (a stdio server's) for operators only. */
interface SessionError {
  reason: string;
  stderrTail?: string;
}

const CLIENT_INFO = { name: 'switchyard-tool-worker', version: '0.1.0' };

function toCatalogTool(tool: Tool): CatalogTool {
  return {
    name: tool.name,
    ...(tool.title ? { title: tool.title } : {}),
    ...(tool.description ? { description: tool.description } : {}),
    inputSchema: tool.inputSchema as Record<string, unknown>,
    ...(tool.outputSchema ? { outputSchema: tool.outputSchema as Record<string, unknown> } : {}),
    ...(tool.annotations ? { annotations: tool.annotations } : {}),
    ...(tool.execution ? { execution: tool.execution } : {}),
  };
}

/**
 * `auto`: each server gets the newest revision it speaks — a 2026-07-28 server answers the
 * `server/discover` probe (stateless requests), an older one falls back to `initialize`.
 */
function negotiationMode(protocol: ServerConfig['protocol']): VersionNegotiationMode {
  if (protocol === 'auto') return 'auto';
  if (protocol === '2025-11-25') return 'legacy';
  return { pin: protocol };
}

/**
 * A liveness check that each revision has: 2026-07-28 removed `ping`, and `server/discover` is its
 * cheapest stateless request; older revisions keep `ping`.
 */
async function pingServer(client: Client, timeout: number): Promise<void> {
  if (client.getProtocolEra() === 'modern') await client.discover({ timeout });
  else await client.ping({ timeout });
}

/**
 * One warm MCP session to one server, kept alive for the worker's lifetime:
 * connecting → ready → degraded → reconnecting → ready | closed (docs/semantics.md §11).
 * Every request, pings included, goes through one semaphore sized by the server's concurrency,
 * so a session never has more requests in flight than the config allows.
 */
export class ManagedSession extends EventEmitter<SessionEvents> {
  private status: SessionStatus = { state: 'connecting', since: Date.now(), connects: 0 };
  private client: Client | undefined;
  /** 2026-07-28 with the tasks extension: the ext-tasks session over `client` (task-session.ts). */
  private taskSession: TaskEnabledSession | undefined;
  private readonly questions = new SessionQuestions();
  private readonly logs = new SessionLogs();
  private pidOf: () => number | undefined = () => undefined;
  private readonly inFlight: Semaphore;
  private readonly stderr = new StderrTail();
  private toolsByName = new Map<string, CatalogTool>();
  private reconnectAttempt = 0;
  private pingFailures = 0;
  private pingTimer: NodeJS.Timeout | undefined;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private closing = false;
  serverInfo: { name: string; version: string } | undefined;

  constructor(
    readonly server: string,
    readonly config: ServerConfig,
    private readonly log: Logger,
    /** HTTP servers: attaches each request's credential (servers.<name>.auth). */
    private readonly fetch?: FetchLike,
  ) {
    super();
    this.inFlight = new Semaphore(config.concurrency);
  }

  get state(): SessionState {
    return this.status.state;
  }

  snapshot(): SessionStatus {
    const pid = this.pidOf();
    return { ...this.status, ...(pid ? { pid } : {}) };
  }

  get tools(): CatalogTool[] {
    return [...this.toolsByName.values()];
  }

  tool(name: string): CatalogTool | undefined {
    return this.toolsByName.get(name);
  }

  /** Resolves once the first connect attempt has settled (ready, or failed and retrying). */
  async open(): Promise<void> {
    await this.connect();
  }

  async callTool(name: string, args: Record<string, unknown>, options: CallOptions): Promise<CallToolResult> {
    return this.withSlot(options.beforeSend, (client) => {
      // Questions the server asks during this call (elicitation) go to this call's handler.
      const detach = this.questions.attach(options.onQuestion);
      // Every call is counted (with or without a handler): a log message reaches only a call alone.
      const detachLogs = this.logs.attach(options.onLog);
      const meta = {
        ...options.meta,
        ...(options.logLevel && client.getProtocolEra() === 'modern'
          ? { [LOG_LEVEL_META_KEY]: options.logLevel }
          : {}),
      };
      const total = totalLimit(options.maxTotalTimeoutMs, options.signal);
      // On a 2026-07-28 connection the SDK adds the per-request protocol `_meta` envelope to ours and,
      // over Streamable HTTP, the `Mcp-Param-*` headers the tool's `x-mcp-header` properties ask for
      // (SEP-2243), from `toolDefinition`: the tool as this session listed it, without its output schema,
      // since the SDK's client-side output-schema check would turn a result the server did return (so the
      // call ran) into an error that looks like bad arguments.
      // watchStream: a response stream that ends without the answer fails the call as a lost connection.
      const listed = this.toolsByName.get(name);
      return watchStream(total.signal, (signal) =>
        client.callTool(
          { name, arguments: args, ...(Object.keys(meta).length > 0 ? { _meta: meta } : {}) },
          {
            timeout: options.timeoutMs,
            resetTimeoutOnProgress: true,
            signal,
            ...(options.onprogress ? { onprogress: options.onprogress } : {}),
            ...(listed ? { toolDefinition: inputOnly(listed) } : {}),
          },
        ),
      ).finally(() => {
        total.clear();
        detach();
        detachLogs();
      });
    });
  }

  /**
   * A request the typed surface does not offer (the 2025-11-25 task methods: task-augmented tools/call,
   * tasks/get, tasks/result, tasks/cancel), validated by `schema`, through the same in-flight slots as
   * calls and with the same last-moment `beforeSend`.
   */
  async send<S extends StandardSchemaV1>(
    request: Request,
    schema: S,
    options: Pick<CallOptions, 'timeoutMs' | 'signal' | 'beforeSend'>,
  ): Promise<StandardSchemaV1.InferOutput<S>> {
    return this.withSlot(options.beforeSend, (client) =>
      client.request(request, schema, {
        timeout: options.timeoutMs,
        ...(options.signal ? { signal: options.signal } : {}),
      }),
    );
  }

  /** The tasks extension's session when this connection speaks 2026-07-28 and the server offers tasks. */
  get extensionTasks(): TaskEnabledSession | undefined {
    return this.taskSession;
  }

  /** The Streamable HTTP session id (Mcp-Session-Id) when there is one: a server may keep tasks per session. */
  get httpSessionId(): string | undefined {
    return this.client?.transport?.sessionId;
  }

  /** The revision this session negotiated, once connected. */
  get protocolVersion(): string | undefined {
    return this.status.protocolVersion;
  }

  /** Runs a request in an in-flight slot on a connected client, `beforeSend` right before it is written. */
  private withSlot<T>(
    beforeSend: CallOptions['beforeSend'],
    send: (client: Client) => Promise<T>,
  ): Promise<T> {
    return this.inFlight.run(async () => {
      const client = this.client;
      if (!client || (this.state !== 'ready' && this.state !== 'degraded')) {
        throw new SessionNotReadyError(this.server, this.state);
      }
      await beforeSend?.();
      if (this.client !== client) throw new SessionNotReadyError(this.server, this.state);
      return send(client);
    });
  }

  async close(): Promise<void> {
    this.closing = true;
    clearInterval(this.pingTimer);
    clearTimeout(this.reconnectTimer);
    const client = this.client;
    this.client = undefined;
    this.dropTaskSession();
    // Client.close closes the transport; for stdio that ends stdin, then SIGTERM, then SIGKILL.
    await client
      ?.close()
      .catch((error: unknown) => this.log.warn({ err: error }, 'closing MCP session failed'));
    this.setState('closed');
  }

  /**
   * `error` is what any team may read (the orchestrator quotes it in a `circuit_open` outcome): it never
   * carries the server's stderr, which may echo another team's arguments or secrets. That goes in
   * `stderrTail`, which only the worker's log and the operator view (`GET /v1/servers`) show.
   */
  private setState(state: SessionState, error?: SessionError): void {
    if (this.status.state === state && !error) return;
    const { lastError, stderrTail } = error
      ? { lastError: error.reason, stderrTail: error.stderrTail }
      : { lastError: this.status.lastError, stderrTail: this.status.stderrTail };
    this.status = {
      state,
      // Repeated reconnect attempts keep the outage's start: how long a server has been down is what
      // the orchestrator's circuit (servers.*.unavailableAfterMs) looks at.
      since: this.status.state === state ? this.status.since : Date.now(),
      connects: this.status.connects,
      ...(this.status.protocolVersion ? { protocolVersion: this.status.protocolVersion } : {}),
      ...(lastError ? { lastError } : {}),
      ...(stderrTail ? { stderrTail } : {}),
    };
    this.log.info(
      {
        server: this.server,
        state,
        ...(state === 'ready' ? { protocolVersion: this.status.protocolVersion } : {}),
        ...(error ? { error: error.reason, ...(error.stderrTail ? { stderr: error.stderrTail } : {}) } : {}),
      },
      'session state',
    );
    this.emit('state', state);
  }

  /** The team-facing reason, with the stderr tail of a stdio server kept apart for operators. */
  private sessionError(reason: string): SessionError {
    const stderrTail = this.stderr.tail(5);
    return { reason, ...(stderrTail ? { stderrTail } : {}) };
  }

  private async connect(): Promise<void> {
    if (this.closing) return;
    const { transport, pid } = createTransport(this.config, this.stderr, this.fetch);
    const client = new Client(CLIENT_INFO, {
      capabilities: { ...ELICITATION_CAPABILITY },
      versionNegotiation: {
        mode: negotiationMode(this.config.protocol),
        probe: { timeoutMs: this.config.handshakeTimeoutMs },
      },
      listChanged: {
        tools: {
          onChanged: (error, tools) => {
            if (error) this.log.warn({ server: this.server, err: error }, 'tools/list refresh failed');
            else if (tools) {
              this.replaceTools(tools);
              this.log.info({ server: this.server, tools: tools.length }, 'tools/list refreshed');
            }
          },
        },
      },
    });
    client.setRequestHandler('elicitation/create', (request) => this.questions.ask(request));
    client.setNotificationHandler('notifications/message', (notification) => {
      if (!this.logs.deliver(notification.params)) {
        this.log.debug(
          { server: this.server, level: notification.params.level },
          'MCP log message for no single call: dropped',
        );
      }
    });
    this.pidOf = pid;
    try {
      await client.connect(transport, { timeout: this.config.handshakeTimeoutMs });
      const tools = await this.listAllTools(client);
      if (this.closing) {
        await client.close();
        return;
      }
      this.client = client;
      this.serverInfo = client.getServerVersion();
      client.onclose = () =>
        this.lost(
          client,
          this.config.transport === 'stdio'
            ? 'the MCP server process exited and is being restarted'
            : 'the connection to the MCP server closed and is being reopened',
        );
      client.onerror = (error) => this.log.debug({ server: this.server, err: error }, 'MCP transport error');
      // After onclose is set: the task session chains the client's handlers it replaces.
      this.taskSession = await openTaskSession(
        client,
        this.server,
        this.config,
        CLIENT_INFO,
        ELICITATION_CAPABILITY,
        (beforeSend, send) => this.withSlot(beforeSend, () => send()),
      );
      this.replaceTools(tools);
      this.reconnectAttempt = 0;
      this.pingFailures = 0;
      this.status.connects += 1;
      const protocolVersion = client.getNegotiatedProtocolVersion();
      if (protocolVersion) this.status.protocolVersion = protocolVersion;
      this.setState('ready');
      this.startPings();
    } catch (error) {
      const failure = this.sessionError(`connect failed: ${(error as Error).message}`);
      await client.close().catch(() => undefined);
      if (this.closing) return;
      this.scheduleReconnect(failure);
    }
  }

  /**
   * Forgets the task session of a client that is going away, without closing it: ext-tasks' close()
   * cancels every task still followed, and a lost connection or a shutdown is a hand-over, not a
   * cancel (docs/semantics.md §12). Its requests fail with the closed connection (raw-requests.ts).
   */
  private dropTaskSession(): void {
    this.taskSession = undefined;
  }

  private async listAllTools(client: Client): Promise<Tool[]> {
    // Without a cursor the SDK walks every page (bounded by its page cap) and caches the aggregate.
    const { tools } = await client.listTools(undefined, { timeout: this.config.handshakeTimeoutMs });
    return tools;
  }

  private replaceTools(tools: Tool[]): void {
    this.toolsByName = new Map(tools.map((tool) => [tool.name, toCatalogTool(tool)]));
    this.emit('tools', this.tools);
  }

  /** The session died under us (child exited, HTTP stream gone, pings failing): start over. */
  private lost(client: Client, reason: string): void {
    if (this.closing || this.client !== client) return;
    this.client = undefined;
    this.dropTaskSession();
    clearInterval(this.pingTimer);
    const failure = this.sessionError(reason);
    void client.close().catch(() => undefined);
    this.scheduleReconnect(failure);
  }

  private scheduleReconnect(failure: SessionError): void {
    const delay = backoffDelay(
      this.reconnectAttempt,
      this.config.reconnect.initialDelayMs,
      this.config.reconnect.maxDelayMs,
    );
    this.reconnectAttempt += 1;
    this.setState('reconnecting', failure);
    this.log.warn(
      {
        server: this.server,
        delayMs: delay,
        attempt: this.reconnectAttempt,
        reason: failure.reason,
        ...(failure.stderrTail ? { stderr: failure.stderrTail } : {}),
      },
      'reconnecting',
    );
    this.reconnectTimer = setTimeout(() => void this.connect(), delay);
  }

  private startPings(): void {
    clearInterval(this.pingTimer);
    this.pingTimer = setInterval(() => void this.ping(), this.config.health.pingIntervalMs);
    this.pingTimer.unref();
  }

  private async ping(): Promise<void> {
    const client = this.client;
    // A session busy with a call is not pinged: a ping would be a second request in flight,
    // and the call's own timeout already watches the connection.
    if (!client) return;
    if (!this.inFlight.tryAcquire()) {
      this.log.debug({ server: this.server }, 'ping skipped: a request is in flight');
      return;
    }
    this.log.debug({ server: this.server }, 'ping sent');
    try {
      await pingServer(client, this.config.health.pingTimeoutMs);
      this.pingFailures = 0;
      if (this.state === 'degraded') this.setState('ready');
    } catch (error) {
      this.pingFailures += 1;
      const reason = `ping failed ${this.pingFailures}/${this.config.health.failureThreshold}: ${(error as Error).message}`;
      if (this.pingFailures >= this.config.health.failureThreshold) this.lost(client, reason);
      else this.setState('degraded', { reason });
    } finally {
      this.inFlight.release();
    }
  }
}

/**
 * The total limit of a call (maxTimeoutMs, which progress cannot extend), kept here rather than by the
 * SDK: the v2 client rejects a call whose `maxTotalTimeout` passed without telling the server, while an
 * aborted signal sends `notifications/cancelled` (or closes a 2026-07-28 request's stream). The abort
 * reason is the SDK's own timeout error with the same data, so the outcome names the limit that fired.
 */
function totalLimit(
  limitMs: number,
  outer: AbortSignal | undefined,
): { signal: AbortSignal; clear: () => void } {
  const controller = new AbortController();
  const startedAt = Date.now();
  const timer = setTimeout(
    () =>
      controller.abort(
        new SdkError(SdkErrorCode.RequestTimeout, `the total limit (maxTimeoutMs ${limitMs} ms) passed`, {
          maxTotalTimeout: limitMs,
          totalElapsed: Date.now() - startedAt,
        }),
      ),
    limitMs,
  );
  return {
    signal: outer ? AbortSignal.any([outer, controller.signal]) : controller.signal,
    clear: () => clearTimeout(timer),
  };
}

/**
 * A listed tool as the SDK's `callTool` takes it for SEP-2243 header mirroring: its name and input schema
 * only, so the SDK validates no output (the call ran; Switchyard reports what the server returned).
 */
function inputOnly(tool: CatalogTool): Tool {
  return { name: tool.name, inputSchema: { ...tool.inputSchema, type: 'object' } };
}
