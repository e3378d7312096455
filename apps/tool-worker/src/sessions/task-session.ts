import { AsyncLocalStorage } from 'node:async_hooks';
import type { Client, Implementation } from '@modelcontextprotocol/client';
import {
  createTaskSessionEndpointId,
  createTaskSessionFromClient,
  DispatchError,
  type RawClientDispatch,
  type TaskEnabledSession,
} from '@modelcontextprotocol/ext-tasks/client';
import type { ServerConfig } from '@switchyard/contracts';
import { RawRequests } from './raw-requests.ts';

/** The 2026-07-28 tasks extension's identifier, in the server's capabilities and each request's `_meta`. */
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

/** Runs a request in one of the session's in-flight slots, `beforeSend` right before it is written. */
export type InSlot = <T>(beforeSend: (() => Promise<void>) | undefined, send: () => Promise<T>) => Promise<T>;

/** The `beforeSend` of the `tools/call` being started in this async context (see `startingCall`). */
const starting = new AsyncLocalStorage<() => Promise<void>>();

/**
 * Runs `start` (which sends one `tools/call` through the task session) so that the call's `beforeSend`
 * — the at-most-once fence — runs in the in-flight slot right before that request is written, as it
 * does for a plain call. Only the first `tools/call` gets it; the polls that follow do not.
 */
export function startingCall<T>(
  beforeSend: (() => Promise<void>) | undefined,
  start: () => Promise<T>,
): Promise<T> {
  if (!beforeSend) return start();
  let pending: (() => Promise<void>) | undefined = beforeSend;
  return starting.run(async () => {
    const once = pending;
    pending = undefined;
    await once?.();
  }, start);
}

/**
 * A task-enabled session (`@modelcontextprotocol/ext-tasks`) over a connected 2026-07-28 client whose
 * server offers the tasks extension; undefined for any other connection. Its requests use the raw
 * path (raw-requests.ts) and the session's in-flight slots, so tasks count against `concurrency` like
 * calls. Its endpoint id is derived from the server's configuration, so every worker of the fleet gets
 * the same one and a task reference recorded by one can be resumed by another.
 */
export async function openTaskSession(
  client: Client,
  server: string,
  config: ServerConfig,
  clientInfo: Implementation,
  clientCapabilities: Record<string, unknown>,
  inSlot: InSlot,
): Promise<TaskEnabledSession | undefined> {
  const protocolVersion = client.getNegotiatedProtocolVersion();
  const transport = client.transport;
  if (client.getProtocolEra() !== 'modern' || !protocolVersion || !transport) return undefined;
  if (client.getServerCapabilities()?.extensions?.[TASKS_EXTENSION] === undefined) return undefined;
  const raw = new RawRequests(transport);
  const rawDispatch: RawClientDispatch = (request, options) => {
    const isCall =
      typeof request === 'object' &&
      request !== null &&
      'method' in request &&
      request.method === 'tools/call';
    return inSlot(isCall ? starting.getStore() : undefined, () => raw.dispatch(request, options)).catch(
      (error: unknown) => {
        // A poll asked while the session reconnects is asked again; a call keeps its own error.
        if (!isCall && !(error instanceof DispatchError))
          throw new DispatchError((error as Error).message, true);
        throw error;
      },
    );
  };
  return createTaskSessionFromClient(client, {
    endpointId: await createTaskSessionEndpointId('switchyard', endpointOf(server, config)),
    rawDispatch,
    v2RequestFraming: {
      protocolVersion,
      clientInfo: { ...clientInfo },
      clientCapabilities: JSON.parse(JSON.stringify(clientCapabilities)),
    },
  });
}

/** What identifies the server a task lives on, the same for every worker of the fleet. */
function endpointOf(server: string, config: ServerConfig): Record<string, unknown> {
  switch (config.transport) {
    case 'stdio':
      return { server, transport: 'stdio', command: config.command, args: config.args };
    default:
      return { server, transport: config.transport, url: config.url };
  }
}
