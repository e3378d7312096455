import {
  Client,
  type Request,
  type StandardSchemaV1,
  StreamableHTTPClientTransport,
} from '@modelcontextprotocol/client';
import type { ServerConfig } from '@switchyard/contracts';
import type { CallOptions } from '../sessions/managed-session.ts';

/** Where task requests go: the worker's own session, or a session a task is bound to (see below). */
export interface TaskLink {
  send<S extends StandardSchemaV1>(
    request: Request,
    schema: S,
    options: Pick<CallOptions, 'timeoutMs' | 'signal' | 'beforeSend'>,
  ): Promise<StandardSchemaV1.InferOutput<S>>;
}

const CLIENT_INFO = { name: 'switchyard-tool-worker-task-resume', version: '0.1.0' };

/**
 * A Streamable HTTP server may keep tasks per MCP session (server-everything does: `tasks/get` from
 * another session answers "Task not found"). A task created on a session this worker does not hold —
 * by a worker that died, or before a reconnect — is followed on that recorded session: the SDK's client
 * skips the handshake when its transport already has a session id, and the recorded revision goes into
 * the `mcp-protocol-version` header. Such a link has no session slot of its own: the queue's global
 * concurrency still counts the call, which is what keeps calls to the server serialized.
 */
export class AttachedTaskLink implements TaskLink {
  private constructor(private readonly client: Client) {}

  static async open(
    config: ServerConfig,
    sessionId: string,
    protocolVersion?: string,
  ): Promise<AttachedTaskLink> {
    if (config.transport !== 'http') {
      throw new Error(
        `a task bound to MCP session ${sessionId} needs an http server, not ${config.transport}`,
      );
    }
    const client = new Client(CLIENT_INFO, { capabilities: {} });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(config.url), {
        sessionId,
        ...(protocolVersion ? { protocolVersion } : {}),
        requestInit: { headers: config.headers },
      }),
    );
    return new AttachedTaskLink(client);
  }

  send<S extends StandardSchemaV1>(
    request: Request,
    schema: S,
    options: Pick<CallOptions, 'timeoutMs' | 'signal' | 'beforeSend'>,
  ): Promise<StandardSchemaV1.InferOutput<S>> {
    return this.client.request(request, schema, {
      timeout: options.timeoutMs,
      ...(options.signal ? { signal: options.signal } : {}),
    });
  }

  /** Closes this client's transport only: the server's session (and its tasks) stays. */
  async close(): Promise<void> {
    // close() does not send DELETE (terminateSession does), so the session lives on.
    await this.client.close().catch(() => undefined);
  }
}
