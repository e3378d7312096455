import { resolve } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { CallToolResultSchema, ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { isAlive, Resources, ROOT, textOf } from './harness.ts';

const resources = new Resources();
afterEach(() => resources.release());

const HOSTILE = resolve(import.meta.dirname, '../src/hostile.ts');

/** Spawns hostile.ts over stdio and connects the SDK client, as a tool worker does. */
async function connectHostile(env: Record<string, string> = {}, handshakeTimeoutMs?: number) {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: ['--import', 'tsx', HOSTILE],
    cwd: ROOT,
    env,
    stderr: 'inherit',
  });
  const client = new Client({ name: 'hostile-test', version: '0.0.0' });
  const errors: string[] = [];
  client.onerror = (error) => errors.push(error.message);
  resources.defer(() => client.close());
  await client.connect(transport, handshakeTimeoutMs ? { timeout: handshakeTimeoutMs } : {});
  // client.request, not callTool: callTool would add its own checks on top of what the server sent.
  const call = (name: string, args: Record<string, unknown> = {}, timeout = 5_000) =>
    client.request({ method: 'tools/call', params: { name, arguments: args } }, CallToolResultSchema, {
      timeout,
    });
  return { client, transport, call, errors };
}

describe('hostile', () => {
  it('lists its tools with JSON input schemas and answers ping', async () => {
    const { client } = await connectHostile();
    expect(client.getServerVersion()).toEqual({ name: 'hostile', version: '0.1.0' });
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual([
      'blob',
      'bad_utf8',
      'nul_text',
      'garbage_then_answer',
      'wrong_shape',
      'error_object',
      'never_answers',
      'deep_structured',
      'fat_result',
      'text_blocks',
      'huge_line',
    ]);
    for (const tool of tools) expect(tool.inputSchema.type).toBe('object');
    await expect(client.ping()).resolves.toEqual({});
  });

  it('sends exactly the misbehaviour each tool names', async () => {
    const { call, errors } = await connectHostile();
    expect(textOf(await call('blob', { bytes: 3 * 1024 * 1024 }))).toHaveLength(3 * 1024 * 1024);
    await expect(call('blob', { bytes: 'lots' })).rejects.toMatchObject({ code: ErrorCode.InvalidParams });
    expect(textOf(await call('bad_utf8'))).toMatch(/^before\uFFFD+after$/);
    expect(textOf(await call('nul_text'))).toBe('nul:\u0000 lone surrogate:\ud800 end');
    expect(textOf(await call('garbage_then_answer'))).toBe('answered after the garbage');
    expect(errors.join('\n')).toMatch(/not valid JSON/);
    await expect(call('wrong_shape')).rejects.toThrow(/expected array/);
    const rpcError = await call('error_object').catch((error: unknown) => error);
    expect(rpcError).toBeInstanceOf(McpError);
    expect(rpcError).toMatchObject({ code: -32603, message: expect.stringMatching(/on purpose/) });
    await expect(call('never_answers', {}, 300)).rejects.toMatchObject({ code: ErrorCode.RequestTimeout });
    // Still answering after all of that.
    expect(textOf(await call('blob', { bytes: 5 }))).toBe('hosti');
  });

  it('overflows the client read buffer with huge_line, which closes the connection', async () => {
    const { client, transport, call } = await connectHostile();
    const pid = transport.pid as number;
    const closed = new Promise<void>((done) => {
      client.onclose = done;
    });
    await expect(call('huge_line', {}, 30_000)).rejects.toMatchObject({ code: ErrorCode.ConnectionClosed });
    await closed;
    await vi.waitFor(() => expect(isAlive(pid)).toBe(false), { timeout: 10_000 });
  });

  it('never answers initialize with HOSTILE_HANDSHAKE=never', async () => {
    await expect(connectHostile({ HOSTILE_HANDSHAKE: 'never' }, 500)).rejects.toMatchObject({
      code: ErrorCode.RequestTimeout,
    });
  });
});
