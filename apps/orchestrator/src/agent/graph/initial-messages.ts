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

/** The text of a message's content, whatever blocks it came in. */
export function messageText(message: BaseMessage | undefined): string {
  if (!message) return '';
  const { content } = message;
  if (typeof content === 'string') return content;
  return content
    .map((block) =>
      typeof block === 'string' ? block : block.type === 'text' && 'text' in block ? String(block.text) : '',
    )
    .join('');
}
