import type { BaseMessage } from '@langchain/core/messages';

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
