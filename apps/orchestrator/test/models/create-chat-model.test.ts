import { ChatAnthropic } from '@langchain/anthropic';
import { ChatOllama } from '@langchain/ollama';
import { ChatOpenAI } from '@langchain/openai';
import { describe, expect, it } from 'vitest';
import { defaultModelSpecFromEnv, ModelConfigError, ScriptedChatModel } from '../../src/models/index.ts';
import { buildModel } from '../fixtures/build-model.ts';

/** The error buildModel threw, so its fields can be checked. */
const configErrorOf = async (build: () => Promise<unknown>): Promise<ModelConfigError> => {
  try {
    await build();
  } catch (error) {
    if (error instanceof ModelConfigError) return error;
    throw error;
  }
  throw new Error('expected a ModelConfigError');
};

describe('createChatModel', () => {
  it('builds each provider from the given environment', async () => {
    const env = { OPENAI_API_KEY: 'sk-o', ANTHROPIC_API_KEY: 'sk-a', OLLAMA_BASE_URL: 'http://ollama:11434' };
    expect(await buildModel({ provider: 'scripted', script: [{ final: 'x' }] }, {})).toBeInstanceOf(
      ScriptedChatModel,
    );
    const openai = await buildModel({ provider: 'openai', name: 'gpt-4o-mini', temperature: 0.2 }, env);
    expect(openai).toBeInstanceOf(ChatOpenAI);
    expect(openai).toMatchObject({ model: 'gpt-4o-mini', temperature: 0.2 });

    const anthropic = await buildModel({ provider: 'anthropic', name: 'claude-x', maxTokens: 100 }, env);
    expect(anthropic).toBeInstanceOf(ChatAnthropic);
    expect(anthropic).toMatchObject({ model: 'claude-x', maxTokens: 100 });

    const ollama = await buildModel({ provider: 'ollama', name: 'qwen3', maxTokens: 50 }, env);
    expect(ollama).toBeInstanceOf(ChatOllama);
    expect(ollama).toMatchObject({ model: 'qwen3', baseUrl: 'http://ollama:11434', numPredict: 50 });
  });

  it('defaults ollama to the local daemon', async () => {
    expect(await buildModel({ provider: 'ollama', name: 'qwen3' }, {})).toMatchObject({
      baseUrl: 'http://127.0.0.1:11434',
    });
  });

  it('points anthropic at ANTHROPIC_BASE_URL when set', async () => {
    const model = await buildModel(
      { provider: 'anthropic', name: 'claude-x' },
      { ANTHROPIC_API_KEY: 'sk-a', ANTHROPIC_BASE_URL: 'http://127.0.0.1:9/anthropic' },
    );
    expect(model).toMatchObject({ apiUrl: 'http://127.0.0.1:9/anthropic' });
  });

  it('refuses anthropic without ANTHROPIC_API_KEY, naming the variable', async () => {
    const error = await configErrorOf(() => buildModel({ provider: 'anthropic', name: 'claude-x' }, {}));
    expect(error.setting).toBe('ANTHROPIC_API_KEY');
    expect(error.message).toContain('ANTHROPIC_API_KEY');
    expect(error.name).toBe('ModelConfigError');
    expect(error).toBeInstanceOf(Error);
  });

  it('refuses openai without a key or a base URL, naming the variable', async () => {
    for (const env of [{}, { OPENAI_API_KEY: '', OPENAI_BASE_URL: '  ' }]) {
      const error = await configErrorOf(() => buildModel({ provider: 'openai', name: 'gpt-4o-mini' }, env));
      expect(error.setting).toBe('OPENAI_API_KEY');
      expect(error.message).toContain('OPENAI_API_KEY');
    }
  });
});

describe('defaultModelSpecFromEnv', () => {
  it('reads provider and name', () => {
    for (const provider of ['openai', 'anthropic', 'ollama']) {
      expect(
        defaultModelSpecFromEnv({ SWITCHYARD_MODEL_PROVIDER: provider, SWITCHYARD_MODEL_NAME: 'm1' }),
      ).toEqual({ provider, name: 'm1' });
    }
  });

  it('is undefined when unset, incomplete or not a hosted provider', () => {
    expect(defaultModelSpecFromEnv({})).toBeUndefined();
    expect(defaultModelSpecFromEnv({ SWITCHYARD_MODEL_PROVIDER: 'openai' })).toBeUndefined();
    expect(defaultModelSpecFromEnv({ SWITCHYARD_MODEL_NAME: 'm1' })).toBeUndefined();
    expect(
      defaultModelSpecFromEnv({ SWITCHYARD_MODEL_PROVIDER: 'scripted', SWITCHYARD_MODEL_NAME: 'm1' }),
    ).toBeUndefined();
    expect(
      defaultModelSpecFromEnv({ SWITCHYARD_MODEL_PROVIDER: 'gemini', SWITCHYARD_MODEL_NAME: 'm1' }),
    ).toBeUndefined();
  });
});
