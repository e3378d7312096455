import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { HumanMessage, ToolMessage } from '@langchain/core/messages';
import { ChatOpenAI } from '@langchain/openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { buildModel } from '../fixtures/build-model.ts';

/** What the fake server saw, one entry per request. */
interface Received {
  method: string | undefined;
  url: string | undefined;
  headers: IncomingHttpHeaders;
  body: unknown;
}

const completion = (message: Record<string, unknown>, finishReason: string) => ({
  id: `chatcmpl-${received.length}`,
  object: 'chat.completion',
  created: 1_700_000_000,
  model: 'local-model',
  choices: [{ index: 0, message, logprobs: null, finish_reason: finishReason }],
  usage: { prompt_tokens: 12, completion_tokens: 7, total_tokens: 19 },
});

/** Canned replies in order: first a tool call, then a plain answer, as a real model would. */
const replies = [
  () =>
    completion(
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: 'call_abc',
            type: 'function',
            function: { name: 'search__search', arguments: '{"query":"switchyard","limit":3}' },
          },
        ],
      },
      'tool_calls',
    ),
  () => completion({ role: 'assistant', content: 'Switchyard routes tool calls.' }, 'stop'),
];

let received: Received[] = [];

// A real OpenAI-compatible endpoint on loopback, standing in for vLLM / LM Studio / Ollama's /v1.
const server = createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    const text = Buffer.concat(chunks).toString('utf8');
    received.push({
      method: request.method,
      url: request.url,
      headers: request.headers,
      body: text === '' ? undefined : JSON.parse(text),
    });
    const reply = replies[received.length - 1];
    if (request.method !== 'POST' || request.url !== '/v1/chat/completions' || reply === undefined) {
      response.writeHead(404, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ error: { message: `unexpected ${request.method} ${request.url}` } }));
      return;
    }
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify(reply()));
  });
});

let baseURL: string;

beforeAll(async () => {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});

afterAll(async () => {
  server.close();
  await once(server, 'close');
});

beforeEach(() => {
  received = [];
});

const searchTool = {
  type: 'function',
  function: {
    name: 'search__search',
    description: 'Search the indexed documents',
    parameters: {
      type: 'object',
      properties: { query: { type: 'string' }, limit: { type: 'integer', minimum: 1 } },
      required: ['query'],
      additionalProperties: false,
    },
  },
};

/** Request bodies are parsed JSON; the test only reads a few fields. */
const bodyOf = (index: number) => received[index]?.body as Record<string, unknown> | undefined;

describe('openai provider against a local OpenAI-compatible server', () => {
  it('sends the bound tools and parses the tool call, then the final answer', async () => {
    const model = await buildModel(
      { provider: 'openai', name: 'local-model', temperature: 0, maxTokens: 256 },
      { OPENAI_BASE_URL: baseURL },
    );
    expect(model).toBeInstanceOf(ChatOpenAI);
    const bound = model.bindTools([searchTool]);

    const question = new HumanMessage('What is switchyard?');
    const first = await bound.invoke([question]);
    expect(first.tool_calls).toEqual([
      { type: 'tool_call', id: 'call_abc', name: 'search__search', args: { query: 'switchyard', limit: 3 } },
    ]);

    expect(received).toHaveLength(1);
    expect(received[0]?.headers.authorization).toBe('Bearer switchyard-no-key');
    expect(bodyOf(0)).toMatchObject({
      model: 'local-model',
      temperature: 0,
      max_tokens: 256,
      messages: [{ role: 'user', content: 'What is switchyard?' }],
    });
    // Passed through untouched: no `strict` flag or schema rewriting that a local server might reject.
    expect(bodyOf(0)?.tools).toEqual([searchTool]);

    const answer = new ToolMessage({ tool_call_id: 'call_abc', content: 'A tool-call router.' });
    const second = await bound.invoke([question, first, answer]);
    expect(second.content).toBe('Switchyard routes tool calls.');
    expect(second.tool_calls).toEqual([]);
    expect(bodyOf(1)).toMatchObject({
      messages: [
        { role: 'user' },
        { role: 'assistant', tool_calls: [{ id: 'call_abc', function: { name: 'search__search' } }] },
        { role: 'tool', tool_call_id: 'call_abc', content: 'A tool-call router.' },
      ],
    });
  });

  it('sends the configured API key when one is set', async () => {
    const model = await buildModel(
      { provider: 'openai', name: 'local-model' },
      { OPENAI_BASE_URL: baseURL, OPENAI_API_KEY: 'sk-test-123' },
    );
    await model.invoke('hello');
    expect(received[0]?.headers.authorization).toBe('Bearer sk-test-123');
  });
});
