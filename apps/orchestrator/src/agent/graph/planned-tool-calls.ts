import type { AIMessage, BaseMessage } from '@langchain/core/messages';

/** One tool call of a model turn, with the id the job records it under. */
export interface PlannedToolCall {
  /** Unique within the job: the record's id, and the tool-call job's deterministic id. */
  id: string;
  /** The model's own tool_call_id, which the ToolMessage answering it must carry. */
  modelId: string;
  name: string;
  args: Record<string, unknown>;
  /** 0-based index among every tool call of the job. */
  position: number;
}

/**
 * The tool calls of the conversation's last model turn. A model may reuse a tool-call id, within one
 * turn or across turns, and two calls must never share a record or an outcome: a call keeps the
 * model's id the first time that id appears in the job, later ones get `<id>#<position>`. Derived from
 * the conversation alone, so a run resumed from its checkpoint maps the same calls to the same ids.
 */
export function plannedToolCalls(messages: readonly BaseMessage[]): PlannedToolCall[] {
  const taken = new Set<string>();
  let position = 0;
  let planned: PlannedToolCall[] = [];
  for (const message of messages) {
    if (message.getType() !== 'ai') continue;
    planned = [];
    for (const call of (message as AIMessage).tool_calls ?? []) {
      position += 1;
      const modelId = call.id || `call-${position}`;
      let id = taken.has(modelId) ? `${modelId}#${position}` : modelId;
      while (taken.has(id)) id = `${id}#`;
      taken.add(id);
      planned.push({ id, modelId, name: call.name, args: call.args, position: position - 1 });
    }
  }
  return planned;
}
