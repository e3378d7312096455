import { Annotation, MessagesAnnotation } from '@langchain/langgraph';
import type { CallWait } from '../../tool-calls/call-wait.ts';

const replace = <T>(_current: T, next: T) => next;

/** The graph state: the conversation, plus counters the limits are checked against. */
export const AgentState = Annotation.Root({
  ...MessagesAnnotation.spec,
  steps: Annotation<number>({ reducer: replace, default: () => 0 }),
  toolCalls: Annotation<number>({ reducer: replace, default: () => 0 }),
  /** The calls of the current turn that wait for a person; the `wait` node interrupts on them. */
  waits: Annotation<CallWait[]>({ reducer: replace, default: () => [] }),
});

export type AgentStateValue = typeof AgentState.State;
