import { Annotation, MessagesAnnotation } from '@langchain/langgraph';

const replace = <T>(_current: T, next: T) => next;

/** The graph state: the conversation, plus counters the limits are checked against. */
export const AgentState = Annotation.Root({
  ...MessagesAnnotation.spec,
  steps: Annotation<number>({ reducer: replace, default: () => 0 }),
  toolCalls: Annotation<number>({ reducer: replace, default: () => 0 }),
});

export type AgentStateValue = typeof AgentState.State;
