import { ToolMessage } from '@langchain/core/messages';
import { type ToolCallOutcome, toolMessageText } from '@switchyard/contracts';

/**
 * An outcome as the model sees it (docs/architecture.md §3, step 5): `ok` is a plain result; everything else is an
 * error-status ToolMessage whose text says what happened, so the model can act on it and keep going.
 */
export function toToolMessage(outcome: ToolCallOutcome, toolCallId: string, name: string): ToolMessage {
  const ok = outcome.status === 'ok';
  return new ToolMessage({
    tool_call_id: toolCallId,
    name,
    status: ok ? 'success' : 'error',
    content: toolMessageText(outcome),
    artifact: outcome.structuredContent,
  });
}
