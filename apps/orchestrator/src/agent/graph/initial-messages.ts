import { AIMessage, type BaseMessage, HumanMessage, SystemMessage } from '@langchain/core/messages';
import type { AgentJobRequest } from '../../jobs/job-request.ts';

export function initialMessages(request: AgentJobRequest): BaseMessage[] {
  if (request.input !== undefined) return [new HumanMessage(request.input)];
  return (request.messages ?? []).map((message) => {
    switch (message.role) {
      case 'system':
        return new SystemMessage(message.content);
      case 'assistant':
        return new AIMessage(message.content);
      default:
        return new HumanMessage(message.content);
    }
  });
}
