import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Json } from '../support/api-client.ts';
import { Deployment, type Orchestrator, TEAM_KEYS } from '../support/deployment.ts';
import { exampleServer } from '../support/fleet.ts';
import { connectGateway } from '../support/mcp-clients.ts';

/** `{"a":{"a":…}}`, `depth` objects deep around `leaf`, built as text (JSON.stringify would recurse). */
function nested(depth: number, leaf = '1'): string {
  return `${'{"a":'.repeat(depth)}${leaf}${'}'.repeat(depth)}`;
}

/**
 * What /mcp does with input no client should send: JSON nested 10,000 deep (the MCP SDK re-serialises
 * the body recursively: a stack overflow, a 500), a batch with one such message, a body too large,
 * malformed JSON, a JSON scalar. Each is a 4xx JSON-RPC error naming the problem, and the gateway
 * serves the next request as before.
 */
describe('/mcp input limits', () => {
  let deployment: Deployment;
  let orchestrator: Orchestrator;
  const MAX_REQUEST_BYTES = 64 * 1024;

  beforeAll(async () => {
    deployment = new Deployment(
      'mcp-limits',
      () => ({ search: exampleServer('search', { trusted: true }) }),
      {
        orchestrator: { maxRequestBytes: MAX_REQUEST_BYTES },
      },
    );
    await deployment.startWorker();
    orchestrator = await deployment.startOrchestrator();
  });

  afterAll(async () => {
    await deployment?.close();
  });

  const post = async (body: string) => {
    const response = await fetch(`${orchestrator.url}/mcp`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2025-11-25',
        authorization: `Bearer ${TEAM_KEYS.alpha}`,
      },
      body,
    });
    const text = await response.text();
    return { status: response.status, type: response.headers.get('content-type'), text };
  };

  const deepCall = (id: number) =>
    `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"search__search","arguments":{"query":"x","deep":${nested(10_000)}}}}`;

  it('refuses a tools/call whose arguments nest 10,000 deep with a 400 JSON-RPC error naming where', async () => {
    const answer = await post(deepCall(7));
    expect(answer.status, answer.text).toBe(400);
    expect(answer.type).toMatch(/^application\/json/);
    const body: Json = JSON.parse(answer.text);
    expect(body).toMatchObject({ jsonrpc: '2.0', id: 7, error: { code: -32602 } });
    expect(body.error.message).toMatch(/^params\.arguments\.deep\.a\.a\.a… is nested too deeply/);
  });

  it('refuses a batch with one deep message, naming that message', async () => {
    const fine = '{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}';
    const answer = await post(`[${fine},${deepCall(2)}]`);
    expect(answer.status, answer.text).toBe(400);
    const body: Json = JSON.parse(answer.text);
    expect(body).toMatchObject({ jsonrpc: '2.0', id: 2, error: { code: -32602 } });
    expect(body.error.message).toMatch(/^batch message 1: params\.arguments\.deep.* is nested too deeply/);
  });

  it('answers malformed JSON, a JSON scalar and too large a body with 4xx JSON-RPC errors', async () => {
    const malformed = await post('{"jsonrpc":"2.0",');
    expect(malformed.status, malformed.text).toBe(400);
    expect(JSON.parse(malformed.text)).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32700 } });
    for (const scalar of ['42', '"tools/list"', 'null']) {
      const answer = await post(scalar);
      expect(answer.status, `${scalar}: ${answer.text}`).toBe(400);
      expect(JSON.parse(answer.text)).toMatchObject({ jsonrpc: '2.0', id: null, error: {} });
    }
    const huge = await post(
      `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"search__search","arguments":{"query":"${'x'.repeat(MAX_REQUEST_BYTES)}"}}}`,
    );
    expect(huge.status, huge.text).toBe(413);
    const hugeBody: Json = JSON.parse(huge.text);
    expect(hugeBody).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600 } });
    expect(hugeBody.error.message).toMatch(/maxRequestBytes/);
  });

  it('still serves tools/list and tools/call afterwards', async () => {
    const client = await connectGateway(orchestrator.url, TEAM_KEYS.alpha, '2025-11-25');
    try {
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name)).toContain('search__search');
      const result = await client.callTool({ name: 'search__search', arguments: { query: 'after' } });
      expect(result.isError).toBeFalsy();
    } finally {
      await client.close();
    }
    // Nesting well inside the limit is an ordinary call.
    const shallow = await post(
      `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"search__search","arguments":{"query":"x","deep":${nested(20)}}}}`,
    );
    expect(shallow.status, shallow.text).toBe(200);
  });
});
