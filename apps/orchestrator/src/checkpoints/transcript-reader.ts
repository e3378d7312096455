import type { BaseMessage } from '@langchain/core/messages';
import type { BaseCheckpointSaver } from '@langchain/langgraph';
import { Inject, Injectable } from '@nestjs/common';
import { messageText } from '../models/message-text.ts';
import { CHECKPOINTER } from './checkpointer.ts';

export interface TranscriptMessage {
  role: string;
  content: string;
  toolCalls?: Array<{ id?: string; name: string; args: Record<string, unknown> }>;
  toolCallId?: string;
  status?: string;
}

/** An agent job's conversation as its latest checkpoint holds it: what the model saw and said. */
@Injectable()
export class TranscriptReader {
  constructor(@Inject(CHECKPOINTER) private readonly checkpointer: BaseCheckpointSaver) {}

  async read(jobId: string): Promise<TranscriptMessage[]> {
    const tuple = await this.checkpointer.getTuple({ configurable: { thread_id: jobId } });
    const messages = (tuple?.checkpoint.channel_values.messages ?? []) as BaseMessage[];
    return messages.map((message) => {
      const fields = message as BaseMessage & {
        tool_calls?: Array<{ id?: string; name: string; args: Record<string, unknown> }>;
        tool_call_id?: string;
        status?: string;
      };
      return {
        role: message.getType(),
        content: messageText(message),
        ...(fields.tool_calls?.length
          ? { toolCalls: fields.tool_calls.map(({ id, name, args }) => ({ id, name, args })) }
          : {}),
        ...(fields.tool_call_id ? { toolCallId: fields.tool_call_id, status: fields.status } : {}),
      };
    });
  }
}
