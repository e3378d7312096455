import { EventEmitter } from 'node:events';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { RequestOptions } from '@modelcontextprotocol/sdk/shared/protocol.js';
import { type CallToolResult, CallToolResultSchema, type Tool } from '@modelcontextprotocol/sdk/types.js';
import type { CatalogTool, ServerConfig, SessionState, SessionStatus } from '@switchyard/contracts';
import { backoffDelay } from '../runtime/backoff.ts';
import type { Logger } from '../runtime/logger.ts';
import { Semaphore } from '../runtime/semaphore.ts';
import { createTransport } from './session-transport.ts';
import { StderrTail } from './stderr-tail.ts';

export interface SessionEvents {
  state: [state: SessionState];
  tools: [tools: CatalogTool[]];
}

export interface CallOptions {
  timeoutMs: number;
  maxTotalTimeoutMs: number;
  signal?: AbortSignal;
  meta?: Record<string, string>;
  onprogress?: RequestOptions['onprogress'];
  /**
   * Runs once this call holds the session's in-flight slot, right before the request is written:
   * the last moment to refuse sending (it throws), with no wait between it and the send.
   */
  beforeSend?: () => Promise<void>;
}

/** Raised when a call could not be sent because the session was not connected: it never ran. */
export class SessionNotReadyError extends Error {
  constructor(server: string, state: SessionState) {
    super(`session to server "${server}" is ${state}`);
    this.name = 'SessionNotReadyError';
  }
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
  };
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
    return this.inFlight.run(async () => {
      const client = this.client;
      if (!client || (this.state !== 'ready' && this.state !== 'degraded')) {
        throw new SessionNotReadyError(this.server, this.state);
      }
      await options.beforeSend?.();
      if (this.client !== client) throw new SessionNotReadyError(this.server, this.state);
      // client.request, not client.callTool: the SDK's client-side output-schema check would turn a
      // result the server did return (so the call ran) into an error that looks like bad arguments.
      return client.request(
        {
          method: 'tools/call',
          params: { name, arguments: args, ...(options.meta ? { _meta: options.meta } : {}) },
        },
        CallToolResultSchema,
        {
          timeout: options.timeoutMs,
          maxTotalTimeout: options.maxTotalTimeoutMs,
          resetTimeoutOnProgress: true,
          ...(options.signal ? { signal: options.signal } : {}),
          ...(options.onprogress ? { onprogress: options.onprogress } : {}),
        },
      ) as Promise<CallToolResult>;
    });
  }

  async close(): Promise<void> {
    this.closing = true;
    clearInterval(this.pingTimer);
    clearTimeout(this.reconnectTimer);
    const client = this.client;
    this.client = undefined;
    // Client.close closes the transport; for stdio that ends stdin, then SIGTERM, then SIGKILL.
    await client
      ?.close()
      .catch((error: unknown) => this.log.warn({ err: error }, 'closing MCP session failed'));
    this.setState('closed');
  }

  private setState(state: SessionState, error?: string): void {
    if (this.status.state === state && !error) return;
    this.status = {
      state,
      // Repeated reconnect attempts keep the outage's start: how long a server has been down is what
      // the orchestrator's circuit (servers.*.unavailableAfterMs) looks at.
      since: this.status.state === state ? this.status.since : Date.now(),
      connects: this.status.connects,
      ...(error ? { lastError: error } : this.status.lastError ? { lastError: this.status.lastError } : {}),
    };
    this.log.info({ server: this.server, state, ...(error ? { error } : {}) }, 'session state');
    this.emit('state', state);
  }

  private async connect(): Promise<void> {
    if (this.closing) return;
    const { transport, pid } = createTransport(this.config, this.stderr);
    const client = new Client(CLIENT_INFO, {
      capabilities: {},
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
      client.onclose = () => this.lost(client, 'the connection to the MCP server closed');
      client.onerror = (error) => this.log.debug({ server: this.server, err: error }, 'MCP transport error');
      this.replaceTools(tools);
      this.reconnectAttempt = 0;
      this.pingFailures = 0;
      this.status.connects += 1;
      this.setState('ready');
      this.startPings();
    } catch (error) {
      const stderr = this.stderr.tail(5);
      const reason = `connect failed: ${(error as Error).message}${stderr ? ` (stderr: ${stderr})` : ''}`;
      await client.close().catch(() => undefined);
      if (this.closing) return;
      this.scheduleReconnect(reason);
    }
  }

  private async listAllTools(client: Client): Promise<Tool[]> {
    const tools: Tool[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.listTools(cursor ? { cursor } : {}, {
        timeout: this.config.handshakeTimeoutMs,
      });
      tools.push(...page.tools);
      cursor = page.nextCursor;
    } while (cursor);
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
    clearInterval(this.pingTimer);
    const stderr = this.stderr.tail(5);
    void client.close().catch(() => undefined);
    this.scheduleReconnect(`${reason}${stderr ? ` (stderr: ${stderr})` : ''}`);
  }

  private scheduleReconnect(reason: string): void {
    const delay = backoffDelay(
      this.reconnectAttempt,
      this.config.reconnect.initialDelayMs,
      this.config.reconnect.maxDelayMs,
    );
    this.reconnectAttempt += 1;
    this.setState('reconnecting', reason);
    this.log.warn(
      { server: this.server, delayMs: delay, attempt: this.reconnectAttempt, reason },
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
    if (!client || !this.inFlight.tryAcquire()) return;
    this.log.debug({ server: this.server }, 'ping sent');
    try {
      await client.ping({ timeout: this.config.health.pingTimeoutMs });
      this.pingFailures = 0;
      if (this.state === 'degraded') this.setState('ready');
    } catch (error) {
      this.pingFailures += 1;
      const reason = `ping failed ${this.pingFailures}/${this.config.health.failureThreshold}: ${(error as Error).message}`;
      if (this.pingFailures >= this.config.health.failureThreshold) this.lost(client, reason);
      else this.setState('degraded', reason);
    } finally {
      this.inFlight.release();
    }
  }
}
