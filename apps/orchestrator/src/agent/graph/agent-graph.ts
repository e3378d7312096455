import type { AIMessage, BaseMessage, ToolMessage } from '@langchain/core/messages';
import type { BaseCheckpointSaver } from '@langchain/langgraph';
import { END, START, StateGraph } from '@langchain/langgraph';
import { AgentState, type AgentStateValue } from './agent-state.ts';
import { type PlannedToolCall, plannedToolCalls } from './planned-tool-calls.ts';
import { RunLimitError } from './run-limit-error.ts';

export interface AgentGraphDeps {
  /** One model turn over the conversation so far. */
  callModel: (messages: BaseMessage[], signal: AbortSignal | undefined) => Promise<AIMessage>;
  /** Every tool call of one model turn, all at once; one ToolMessage per call, in order. */
  runTools: (calls: PlannedToolCall[]) => Promise<ToolMessage[]>;
  limits: { maxSteps: number; maxToolCalls: number };
  checkpointer: BaseCheckpointSaver;
}

const lastMessage = (state: AgentStateValue) => state.messages.at(-1) as AIMessage | undefined;

/**
 * The agent: model ⇄ tools (a custom StateGraph, not a prebuilt agent, so dispatch, limits and outcomes
 * are ours). Checkpointed after every node, so a run resumed on another replica continues where the
 * last completed node left off.
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
      const messages = await deps.runTools(calls);
      return { messages, toolCalls: state.toolCalls + calls.length };
    })
    .addEdge(START, 'model')
    .addConditionalEdges(
      'model',
      (state) => ((lastMessage(state)?.tool_calls?.length ?? 0) > 0 ? 'tools' : END),
      ['tools', END],
    )
    .addEdge('tools', 'model')
    .compile({ checkpointer: deps.checkpointer });
}
