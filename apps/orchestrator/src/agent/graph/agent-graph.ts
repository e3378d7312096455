import type { AIMessage, BaseMessage, ToolMessage } from '@langchain/core/messages';
import type { BaseCheckpointSaver } from '@langchain/langgraph';
import { END, interrupt, START, StateGraph } from '@langchain/langgraph';
import type { CallWait } from '../../tool-calls/call-wait.ts';
import { AgentState, type AgentStateValue } from './agent-state.ts';
import { type PlannedToolCall, plannedToolCalls } from './planned-tool-calls.ts';
import { RunLimitError } from './run-limit-error.ts';
import type { ToolsResult } from './tools-result.ts';

export interface AgentGraphDeps {
  /** One model turn over the conversation so far. */
  callModel: (messages: BaseMessage[], signal: AbortSignal | undefined) => Promise<AIMessage>;
  /**
   * Every tool call of one model turn, all at once; one ToolMessage per call, in order — or, when some
   * wait for a person, what they wait for (the others are recorded and answered from the record later).
   */
  runTools: (calls: PlannedToolCall[]) => Promise<ToolsResult<ToolMessage>>;
  limits: { maxSteps: number; maxToolCalls: number };
  checkpointer: BaseCheckpointSaver;
}

const lastMessage = (state: AgentStateValue) => state.messages.at(-1) as AIMessage | undefined;

/** What the `wait` node's interrupt carries: the calls that wait, for whoever reads the checkpoint. */
export interface WaitInterrupt {
  waits: CallWait[];
}

/**
 * The agent: model ⇄ tools (a custom StateGraph, not a prebuilt agent, so dispatch, limits and outcomes
 * are ours). Checkpointed after every node, so a run resumed on another replica continues where the
 * last completed node left off. A turn whose calls wait for a person goes tools → wait, which
 * interrupts; resumed (Command), it goes back to tools, which settles the answered calls from the
 * record and the answers (each pass through `wait` is a new task, so each interrupt is its own).
 */
export function buildAgentGraph(deps: AgentGraphDeps) {
  return new StateGraph(AgentState)
    .addNode('model', async (state, config) => {
      if (state.steps >= deps.limits.maxSteps) {
        throw new RunLimitError(
          `the agent reached its step limit (maxSteps ${deps.limits.maxSteps}) without a final answer`,
        );
      }
      const response = await deps.callModel(state.messages, config.signal);
      return { messages: [response], steps: state.steps + 1 };
    })
    .addNode('tools', async (state) => {
      const calls = plannedToolCalls(state.messages);
      if (state.toolCalls + calls.length > deps.limits.maxToolCalls) {
        throw new RunLimitError(
          `the agent reached its tool call limit (maxToolCalls ${deps.limits.maxToolCalls})`,
        );
      }
      const result = await deps.runTools(calls);
      if (result.waits) return { waits: result.waits };
      return { messages: result.messages, toolCalls: state.toolCalls + calls.length, waits: [] };
    })
    .addNode('wait', (state) => {
      // Parks the run; the value given to Command({ resume }) only wakes it: answers live in PostgreSQL.
      interrupt<WaitInterrupt>({ waits: state.waits });
      return { waits: [] };
    })
    .addEdge(START, 'model')
    .addConditionalEdges(
      'model',
      (state) => ((lastMessage(state)?.tool_calls?.length ?? 0) > 0 ? 'tools' : END),
      ['tools', END],
    )
    .addConditionalEdges('tools', (state) => (state.waits.length > 0 ? 'wait' : 'model'), ['wait', 'model'])
    .addEdge('wait', 'tools')
    .compile({ checkpointer: deps.checkpointer });
}
