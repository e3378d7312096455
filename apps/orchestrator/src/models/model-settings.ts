import type { ModelAccess } from './model-access.ts';
import type { ModelSpec } from './model-spec.ts';

const DEFAULT_OLLAMA_BASE_URL = 'http://127.0.0.1:11434';

/**
 * Sent when OPENAI_BASE_URL points at a local OpenAI-compatible server (vLLM, LM Studio, Ollama's
 * /v1) and no key is set: those servers usually ignore the key, but the OpenAI client insists on one.
 */
const PLACEHOLDER_OPENAI_API_KEY = 'switchyard-no-key';

/**
 * One retry only: LangChain's default is 6 with exponential backoff, which holds a job for minutes
 * against a dead or misconfigured endpoint before the run can report the failure.
 */
const MAX_RETRIES = 1;

/**
 * What a provider's LangChain class is constructed with, read from the job's spec and the keys of its
 * team (or the deployment's). Plain data, so a job can be checked at submit time without loading the provider's
 * package (each costs tens of MiB of a replica's memory; see docs/capacity.md).
 */
export type ModelSettings =
  | { provider: 'scripted'; fields: { script: Extract<ModelSpec, { provider: 'scripted' }>['script'] } }
  | {
      provider: 'openai';
      fields: {
        model: string;
        apiKey: string;
        configuration?: { baseURL: string };
        temperature?: number;
        maxTokens?: number;
        maxRetries: number;
      };
    }
  | {
      provider: 'anthropic';
      fields: {
        model: string;
        apiKey: string;
        anthropicApiUrl?: string;
        temperature?: number;
        maxTokens?: number;
        maxRetries: number;
      };
    }
  | {
      provider: 'ollama';
      fields: {
        model: string;
        baseUrl: string;
        temperature?: number;
        numPredict?: number;
        maxRetries: number;
      };
    };

/**
 * The settings of the model a job asked for, with the keys of `access` (its team's, or the deployment's).
 * Throws ModelConfigError when the team may not use the provider or a key is missing.
 */
export function modelSettings(spec: ModelSpec, access: ModelAccess): ModelSettings {
  const refused = access.refusal(spec.provider);
  if (refused) throw refused;
  switch (spec.provider) {
    case 'scripted':
      return { provider: 'scripted', fields: { script: spec.script } };
    case 'openai': {
      const { apiKey, baseUrl } = access.endpoint('openai');
      return {
        provider: 'openai',
        fields: {
          model: spec.name,
          // An endpoint without a key is a local server's (both access kinds insist on one or the other).
          apiKey: apiKey ?? PLACEHOLDER_OPENAI_API_KEY,
          ...(baseUrl === undefined ? {} : { configuration: { baseURL: baseUrl } }),
          temperature: spec.temperature,
          maxTokens: spec.maxTokens,
          maxRetries: MAX_RETRIES,
        },
      };
    }
    case 'anthropic': {
      const { apiKey, baseUrl } = access.endpoint('anthropic');
      if (apiKey === undefined) throw new Error('an anthropic endpoint without a key');
      return {
        provider: 'anthropic',
        fields: {
          model: spec.name,
          apiKey,
          ...(baseUrl === undefined ? {} : { anthropicApiUrl: baseUrl }),
          temperature: spec.temperature,
          maxTokens: spec.maxTokens,
          maxRetries: MAX_RETRIES,
        },
      };
    }
    case 'ollama':
      return {
        provider: 'ollama',
        fields: {
          model: spec.name,
          baseUrl: access.endpoint('ollama').baseUrl ?? DEFAULT_OLLAMA_BASE_URL,
          temperature: spec.temperature,
          numPredict: spec.maxTokens,
          maxRetries: MAX_RETRIES,
        },
      };
  }
}

/** The key a model's settings carry, for scrubbing it from whatever the provider answers. */
export function settingsSecret(settings: ModelSettings): string | undefined {
  return 'apiKey' in settings.fields ? settings.fields.apiKey : undefined;
}
