import { setTimeout as sleep } from 'node:timers/promises';
import { isOpenAITool } from '@langchain/core/language_models/base';
import {
  BaseChatModel,
  type BaseChatModelParams,
  type BindToolsInput,
} from '@langchain/core/language_models/chat_models';
import { AIMessage, type BaseMessage, type ToolCall } from '@langchain/core/messages';
import type { ChatResult } from '@langchain/core/outputs';
import type { ScriptTurn } from './model-spec.ts';

/** Start of the reply once every turn has been played; callers may match on it. */
export const SCRIPT_EXHAUSTED_PREFIX = '[scripted model] script exhausted';

export interface ScriptedChatModelFields extends BaseChatModelParams {
  script: readonly ScriptTurn[];
  /** Set by `bindTools`; only recorded, never enforced. */
  boundToolNames?: readonly string[];
}

/**
 * A chat model that replays a fixed script instead of calling an LLM. For tests and offline demos
 * only: it never reads the conversation beyond counting turns, so it proves the plumbing (graph,
 * tools node, dispatch, checkpoints), not any reasoning.
 *
 * The turn it plays is the number of AI messages already in its input. Keeping no counter of its
 * own means a run resumed from a checkpoint, or the same run replayed, produces the same calls
 * with the same tool-call ids. The flip side: AI messages already in a job's initial history count
 * as played turns.
 */
export class ScriptedChatModel extends BaseChatModel {
  readonly script: readonly ScriptTurn[];
  /** Names of the tools last bound with `bindTools`, for inspection by tests. */
  readonly boundToolNames: readonly string[];
  readonly #fields: ScriptedChatModelFields;

  constructor(fields: ScriptedChatModelFields) {
    super(fields);
    this.#fields = fields;
    this.script = fields.script;
    this.boundToolNames = fields.boundToolNames ?? [];
  }

  override _llmType(): string {
    return 'scripted';
  }

  /**
   * Returns a copy that remembers the tool names. Unknown names in the script are deliberately not
   * refused here: refusing them is the tools node's job, and scripts exist to exercise that path.
   * Call options such as `tool_choice` mean nothing to a script and are ignored.
   */
  override bindTools(tools: BindToolsInput[]): ScriptedChatModel {
    const boundToolNames = tools.map(toolName).filter((name) => name !== undefined);
    return new ScriptedChatModel({ ...this.#fields, boundToolNames });
  }

  override async _generate(messages: BaseMessage[], options: this['ParsedCallOptions']): Promise<ChatResult> {
    const turn = messages.filter((message) => AIMessage.isInstance(message)).length;
    const delay = this.script[turn]?.delayMs ?? 0;
    // A timer, so a thousand waiting runs cost the event loop nothing; the run's signal (cancel,
    // deadline, lost lease) ends the wait at once with an AbortError.
    if (delay > 0) await sleep(delay, undefined, options.signal ? { signal: options.signal } : {});
    const message = this.reply(turn);
    return { generations: [{ message, text: typeof message.content === 'string' ? message.content : '' }] };
  }

  private reply(turn: number): AIMessage {
    const step = this.script[turn];
    if (step === undefined) {
      return new AIMessage(
        `${SCRIPT_EXHAUSTED_PREFIX}: all ${this.script.length} turns were played, this was model call ${turn + 1}`,
      );
    }
    if ('final' in step) return new AIMessage(step.final);
    const toolCalls = step.toolCalls.map(
      (call, index): ToolCall => ({
        type: 'tool_call',
        id: call.id ?? `scripted-${turn}-${index}`,
        name: call.tool,
        args: call.arguments,
      }),
    );
    return new AIMessage({ content: '', tool_calls: toolCalls });
  }
}

/** Tool name from any accepted tool shape: OpenAI function format, or anything with a `name`. */
function toolName(tool: BindToolsInput): string | undefined {
  if (isOpenAITool(tool)) return tool.function.name;
  return 'name' in tool && typeof tool.name === 'string' ? tool.name : undefined;
}
