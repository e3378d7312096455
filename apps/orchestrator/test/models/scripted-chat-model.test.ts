import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from '@langchain/core/messages';
import { describe, expect, it } from 'vitest';
import {
  MAX_SCRIPT_DELAY_MS,
  ModelSpecSchema,
  SCRIPT_EXHAUSTED_PREFIX,
  ScriptedChatModel,
  type ScriptTurn,
} from '../../src/models/index.ts';

const script: ScriptTurn[] = [
  {
    toolCalls: [
      { tool: 'search__search', arguments: { query: 'langgraph' } },
      { tool: 'files__read', arguments: {} },
    ],
  },
  { toolCalls: [{ tool: 'notes__write', arguments: { text: 'hi' }, id: 'explicit-id' }] },
  { final: 'All done.' },
];

const searchTool = {
  type: 'function',
  function: {
    name: 'search__search',
    description: 'Search the docs',
    parameters: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] },
  },
};

/** A history holding `turns` AI messages, each followed by a tool answer. */
const historyAfter = (turns: number): BaseMessage[] => {
  const history: BaseMessage[] = [new HumanMessage('go')];
  for (let turn = 0; turn < turns; turn++) {
    history.push(new AIMessage({ content: '', tool_calls: [{ id: `c${turn}`, name: 't', args: {} }] }));
    history.push(new ToolMessage({ tool_call_id: `c${turn}`, content: 'ok' }));
  }
  return history;
};

describe('scripted chat model', () => {
  const model = new ScriptedChatModel({ script });

  it('plays the first turn with deterministic tool-call ids', async () => {
    const reply = await model.invoke(historyAfter(0));
    expect(reply.content).toBe('');
    expect(reply.tool_calls).toEqual([
      { type: 'tool_call', id: 'scripted-0-0', name: 'search__search', args: { query: 'langgraph' } },
      { type: 'tool_call', id: 'scripted-0-1', name: 'files__read', args: {} },
    ]);
  });

  it('picks the turn from the AI messages in the history, not from earlier calls', async () => {
    // Out of order on purpose: nothing may depend on how often the model was called before.
    const second = await model.invoke(historyAfter(1));
    const first = await model.invoke(historyAfter(0));
    expect(second.tool_calls).toEqual([
      { type: 'tool_call', id: 'explicit-id', name: 'notes__write', args: { text: 'hi' } },
    ]);
    expect(first.tool_calls?.map((call) => call.id)).toEqual(['scripted-0-0', 'scripted-0-1']);
    expect((await model.invoke(historyAfter(0))).tool_calls).toEqual(first.tool_calls);
  });

  it('answers the final turn without tool calls', async () => {
    const reply = await model.invoke(historyAfter(2));
    expect(reply.content).toBe('All done.');
    expect(reply.tool_calls).toEqual([]);
  });

  it('says so once the script is exhausted', async () => {
    for (const turns of [3, 7]) {
      const reply = await model.invoke(historyAfter(turns));
      expect(String(reply.content).startsWith(SCRIPT_EXHAUSTED_PREFIX)).toBe(true);
      expect(reply.tool_calls).toEqual([]);
    }
  });

  it('accepts plain message-like input', async () => {
    const reply = await model.invoke([
      { role: 'user', content: 'go' },
      { role: 'assistant', content: 'earlier answer' },
    ]);
    expect(reply.tool_calls?.[0]?.name).toBe('notes__write');
  });

  it('works through bindTools, records the names and does not police them', async () => {
    const bound = model.bindTools([searchTool, { name: 'files__read', description: 'Read', schema: {} }]);
    expect(bound.boundToolNames).toEqual(['search__search', 'files__read']);
    expect(model.boundToolNames).toEqual([]);
    // notes__write is not bound: the scripted model still asks for it, the tools node refuses it.
    const second = await bound.invoke(historyAfter(1));
    expect(second.tool_calls?.[0]?.name).toBe('notes__write');
    const first = await bound.invoke(historyAfter(0));
    expect(first.tool_calls?.map((call) => call.id)).toEqual(['scripted-0-0', 'scripted-0-1']);
  });

  it('takes a script straight from a parsed model spec', async () => {
    const spec = ModelSpecSchema.parse({ provider: 'scripted', script: [{ toolCalls: [{ tool: 'a' }] }] });
    if (spec.provider !== 'scripted') throw new Error('expected a scripted spec');
    const reply = await new ScriptedChatModel({ script: spec.script }).invoke('hi');
    expect(reply.tool_calls).toEqual([{ type: 'tool_call', id: 'scripted-0-0', name: 'a', args: {} }]);
  });

  it("waits a turn's delayMs before replying, and only that turn", async () => {
    const slow = new ScriptedChatModel({
      script: [{ toolCalls: [{ tool: 'a', arguments: {} }], delayMs: 300 }, { final: 'done' }],
    });
    const started = performance.now();
    expect((await slow.invoke(historyAfter(0))).tool_calls?.[0]?.name).toBe('a');
    expect(performance.now() - started).toBeGreaterThanOrEqual(295);
    // The final turn has no delay: if the first turn's wait leaked into it, this would take 300 ms too.
    const again = performance.now();
    expect((await slow.invoke(historyAfter(1))).content).toBe('done');
    expect(performance.now() - again).toBeLessThan(250);
  });

  it('ends a delayed turn at once when its signal aborts', async () => {
    const slow = new ScriptedChatModel({ script: [{ final: 'never', delayMs: MAX_SCRIPT_DELAY_MS }] });
    const controller = new AbortController();
    const reply = slow.invoke('hi', { signal: controller.signal });
    controller.abort(new Error('job cancelled'));
    // Without the signal reaching the timer this would wait a minute and time the test out.
    await expect(reply).rejects.toThrow();
    const aborted = new ScriptedChatModel({ script: [{ final: 'never', delayMs: MAX_SCRIPT_DELAY_MS }] });
    await expect(aborted.invoke('hi', { signal: AbortSignal.abort() })).rejects.toThrow();
  });

  it('waits on a timer, so many delayed turns wait side by side', async () => {
    const slow = new ScriptedChatModel({ script: [{ final: 'done', delayMs: 500 }] });
    const started = performance.now();
    const replies = await Promise.all(Array.from({ length: 200 }, () => slow.invoke('hi')));
    expect(replies.every((reply) => reply.content === 'done')).toBe(true);
    // One after the other they would take 100 s; a blocking wait would also serialize them.
    expect(performance.now() - started).toBeLessThan(20_000);
  });

  it('reports its type', () => {
    expect(model._llmType()).toBe('scripted');
  });
});
