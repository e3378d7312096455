import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from '@langchain/core/messages';
import { END, MemorySaver, MessagesAnnotation, START, StateGraph } from '@langchain/langgraph';
import { describe, expect, it } from 'vitest';
import { ScriptedChatModel, type ScriptTurn } from '../../src/models/index.ts';

const script: ScriptTurn[] = [
  {
    toolCalls: [
      { tool: 'search__search', arguments: { query: 'switchyard' } },
      { tool: 'search__search', arguments: { query: 'langgraph' } },
    ],
  },
  { toolCalls: [{ tool: 'notes__write', arguments: { text: 'summary' }, id: 'write-1' }] },
  { final: 'Found it.' },
];

const tools = ['search__search', 'notes__write'].map((name) => ({
  type: 'function',
  function: { name, description: name, parameters: { type: 'object', properties: {} } },
}));

/** The agent's shape: model node, tools node answering every call, back to the model until it stops. */
const buildGraph = (model: ScriptedChatModel, checkpointer: MemorySaver, pauseBeforeTools = false) =>
  new StateGraph(MessagesAnnotation)
    .addNode('model', async (state) => ({ messages: [await model.bindTools(tools).invoke(state.messages)] }))
    .addNode('tools', (state) => {
      const last = state.messages.at(-1);
      const calls = last && AIMessage.isInstance(last) ? (last.tool_calls ?? []) : [];
      return {
        messages: calls.map(
          (call) =>
            new ToolMessage({ tool_call_id: call.id ?? '', name: call.name, content: `${call.name} ok` }),
        ),
      };
    })
    .addEdge(START, 'model')
    .addConditionalEdges(
      'model',
      (state) => {
        const last = state.messages.at(-1);
        return last && AIMessage.isInstance(last) && (last.tool_calls?.length ?? 0) > 0 ? 'tools' : END;
      },
      ['tools', END],
    )
    .addEdge('tools', 'model')
    .compile({ checkpointer, interruptBefore: pauseBeforeTools ? ['tools'] : [] });

/** Each message as [type, tool-call ids or answered id, content], enough to see the run's shape. */
const shape = (messages: BaseMessage[]) =>
  messages.map((message) => {
    if (AIMessage.isInstance(message))
      return ['ai', (message.tool_calls ?? []).map((call) => call.id), message.content];
    if (ToolMessage.isInstance(message)) return ['tool', message.tool_call_id, message.content];
    return [message.type, message.content];
  });

const expected = [
  ['human', 'look it up'],
  ['ai', ['scripted-0-0', 'scripted-0-1'], ''],
  ['tool', 'scripted-0-0', 'search__search ok'],
  ['tool', 'scripted-0-1', 'search__search ok'],
  ['ai', ['write-1'], ''],
  ['tool', 'write-1', 'notes__write ok'],
  ['ai', [], 'Found it.'],
];

describe('scripted model in a LangGraph agent', () => {
  it('runs the script to completion with a MemorySaver checkpointer', async () => {
    const checkpointer = new MemorySaver();
    const graph = buildGraph(new ScriptedChatModel({ script }), checkpointer);
    const config = { configurable: { thread_id: 'run-1' } };
    const result = await graph.invoke({ messages: [new HumanMessage('look it up')] }, config);
    expect(shape(result.messages)).toEqual(expected);
    // The checkpoint holds the same conversation, revived from its serialized form.
    expect(shape((await graph.getState(config)).values.messages)).toEqual(expected);
  });

  it('resumes from a checkpoint with a fresh model and replays the same calls', async () => {
    const checkpointer = new MemorySaver();
    const config = { configurable: { thread_id: 'run-2' } };
    const first = buildGraph(new ScriptedChatModel({ script }), checkpointer, true);
    await first.invoke({ messages: [new HumanMessage('look it up')] }, config);
    expect((await first.getState(config)).next).toEqual(['tools']);

    // A new process would build a new model: only the checkpointed history tells it where it is.
    const resumed = buildGraph(new ScriptedChatModel({ script }), checkpointer);
    const result = await resumed.invoke(null, config);
    expect(shape(result.messages)).toEqual(expected);
  });
});
