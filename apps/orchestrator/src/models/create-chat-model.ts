import type { BaseChatModel } from '@langchain/core/language_models/chat_models';
import type { ModelSettings } from './model-settings.ts';
import { ScriptedChatModel } from './scripted-chat-model.ts';

/**
 * A chat model that can bind tools. `BaseChatModel` declares `bindTools` optional; every provider
 * built here has it, and saying so spares the model node a runtime check.
 */
export type ToolCallingChatModel = BaseChatModel & Required<Pick<BaseChatModel, 'bindTools'>>;

/**
 * Builds the chat model of a job's settings (modelSettings: its team's keys). A provider's package is
 * imported here, by the first job that names it, not when the replica starts: most replicas use one
 * provider or none (scripted), and each package costs tens of MiB.
 */
export async function createChatModel(settings: ModelSettings): Promise<ToolCallingChatModel> {
  switch (settings.provider) {
    case 'scripted':
      return new ScriptedChatModel(settings.fields);
    case 'openai': {
      const { ChatOpenAI } = await loadProvider('openai', () => import('@langchain/openai'));
      return new ChatOpenAI(settings.fields);
    }
    case 'anthropic': {
      const { ChatAnthropic } = await loadProvider('anthropic', () => import('@langchain/anthropic'));
      return new ChatAnthropic(settings.fields);
    }
    case 'ollama': {
      const { ChatOllama } = await loadProvider('ollama', () => import('@langchain/ollama'));
      return new ChatOllama(settings.fields);
    }
  }
}

/** A provider package, with a failure to load it named as such rather than as a bare module error. */
async function loadProvider<T>(provider: string, load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (error) {
    throw new Error(`model provider "${provider}" could not be loaded: ${(error as Error).message}`, {
      cause: error,
    });
  }
}
