import { type JSONRPCMessage, SdkError, SdkErrorCode, type Transport } from '@modelcontextprotocol/client';
import {
  DispatchError,
  type JsonRpcResponse,
  type RawClientDispatch,
} from '@modelcontextprotocol/ext-tasks/client';
import type { JsonValue } from '@modelcontextprotocol/ext-tasks/core';
import type { ErrorV2 } from '@modelcontextprotocol/ext-tasks/core/v2';

interface Pending {
  answer: (response: JsonRpcResponse) => void;
  lost: (reason: string) => void;
}

/** Our request ids are strings with this prefix; the SDK Client numbers its own, so the two never collide. */
const ID_PREFIX = 'switchyard-task-';

/**
 * The raw request path that `@modelcontextprotocol/ext-tasks` needs on a 2026-07-28 connection: the SDK
 * Client's codec refuses a `tools/call` answered with `resultType: "task"` and knows no `tasks/*` methods,
 * so these requests are written on the connection's transport directly and their responses taken off it
 * before the Client sees them (an answer with an id it never issued would be an error to it). Only
 * responses to our own ids are taken; everything else still reaches the Client unchanged. The HTTP
 * transport derives `Mcp-Method` / `Mcp-Name` and the revision header from the message itself.
 */
export class RawRequests {
  private readonly pending = new Map<string, Pending>();
  private nextId = 0;
  private closed = false;

  constructor(private readonly transport: Transport) {
    // Installed after Client.connect, so the Client's own handlers are the ones wrapped.
    const deliver = transport.onmessage;
    transport.onmessage = (message, extra) => {
      if (!this.take(message)) deliver?.(message, extra);
    };
    const closing = transport.onclose;
    transport.onclose = () => {
      this.fail('the connection to the MCP server closed');
      closing?.();
    };
  }

  readonly dispatch: RawClientDispatch = (request, options) => {
    if (this.closed) {
      return Promise.reject(
        failure(request, SdkErrorCode.NotConnected, 'the connection to the MCP server is closed'),
      );
    }
    const id = `${ID_PREFIX}${++this.nextId}`;
    const timeoutMs = options?.context?.requestTimeoutMs;
    const signal = options?.signal;
    return new Promise<JsonRpcResponse>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', aborted);
        this.pending.delete(id);
      };
      const aborted = () => {
        done();
        reject(signal?.reason);
      };
      if (signal?.aborted) return reject(signal.reason);
      signal?.addEventListener('abort', aborted, { once: true });
      if (timeoutMs !== undefined) {
        timer = setTimeout(() => {
          done();
          reject(
            failure(
              request,
              SdkErrorCode.RequestTimeout,
              `${methodOf(request)} timed out after ${timeoutMs} ms`,
            ),
          );
        }, timeoutMs);
      }
      this.pending.set(id, {
        answer: (response) => {
          done();
          resolve(response);
        },
        lost: (reason) => {
          done();
          reject(failure(request, SdkErrorCode.ConnectionClosed, reason));
        },
      });
      const message = { ...(request as Record<string, unknown>), jsonrpc: '2.0', id } as JSONRPCMessage;
      this.transport
        .send(message, {
          ...(options?.context?.headers ? { headers: options.context.headers } : {}),
          ...(signal ? { requestSignal: signal } : {}),
        })
        .catch((error: unknown) => {
          done();
          reject(
            failure(
              request,
              SdkErrorCode.SendFailed,
              `sending ${methodOf(request)} failed: ${(error as Error).message}`,
            ),
          );
        });
    });
  };

  private take(message: JSONRPCMessage): boolean {
    if (!('id' in message) || typeof message.id !== 'string' || !message.id.startsWith(ID_PREFIX))
      return false;
    const pending = this.pending.get(message.id);
    if (!pending) return true;
    if ('error' in message) pending.answer({ kind: 'error', error: message.error as ErrorV2 });
    else if ('result' in message) pending.answer({ kind: 'result', result: message.result as JsonValue });
    return true;
  }

  private fail(reason: string): void {
    this.closed = true;
    for (const pending of [...this.pending.values()]) pending.lost(reason);
  }
}

/**
 * A request that got no answer. ext-tasks sends a request again once after a retryable DispatchError,
 * which suits a poll (the task runs on) but never a `tools/call`: that one may have run, so it fails
 * with the SDK's own error (a timeout, a closed connection) and is classified like any call.
 */
function failure(request: JsonValue, code: SdkErrorCode, message: string): Error {
  if (methodOf(request) === 'tools/call') return new SdkError(code, message);
  return new DispatchError(message, true);
}

function methodOf(request: JsonValue): string {
  return typeof request === 'object' && request !== null && 'method' in request
    ? String(request.method)
    : 'request';
}
