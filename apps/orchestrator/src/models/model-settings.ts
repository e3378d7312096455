import { ModelConfigError } from './model-config-error.ts';
import { type HostedModelProvider, type ModelSpec, ModelSpecSchema } from './model-spec.ts';

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
 * What a provider's LangChain class is constructed with, read from the job's spec and the server's
 * environment. Plain data, so a job can be checked at submit time without loading the provider's
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

/** The settings of the model a job asked for. Throws ModelConfigError when the server lacks a key. */
export function modelSettings(spec: ModelSpec, env: NodeJS.ProcessEnv = process.env): ModelSettings {
  switch (spec.provider) {
    case 'scripted':
      return { provider: 'scripted', fields: { script: spec.script } };
    case 'openai': {
      const baseURL = setting(env, 'OPENAI_BASE_URL');
      const apiKey =
        setting(env, 'OPENAI_API_KEY') ?? (baseURL === undefined ? undefined : PLACEHOLDER_OPENAI_API_KEY);
      if (apiKey === undefined) {
        throw new ModelConfigError(
          'OPENAI_API_KEY',
          'provider "openai" needs OPENAI_API_KEY, or OPENAI_BASE_URL for a local OpenAI-compatible server',
        );
      }
      return {
        provider: 'openai',
        fields: {
          model: spec.name,
          apiKey,
          ...(baseURL === undefined ? {} : { configuration: { baseURL } }),
          temperature: spec.temperature,
          maxTokens: spec.maxTokens,
          maxRetries: MAX_RETRIES,
        },
      };
    }
    case 'anthropic': {
      const apiKey = setting(env, 'ANTHROPIC_API_KEY');
      if (apiKey === undefined) {
        throw new ModelConfigError('ANTHROPIC_API_KEY', 'provider "anthropic" needs ANTHROPIC_API_KEY');
      }
      const anthropicApiUrl = setting(env, 'ANTHROPIC_BASE_URL');
      return {
        provider: 'anthropic',
        fields: {
          model: spec.name,
          apiKey,
          ...(anthropicApiUrl === undefined ? {} : { anthropicApiUrl }),
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
          baseUrl: setting(env, 'OLLAMA_BASE_URL') ?? DEFAULT_OLLAMA_BASE_URL,
          temperature: spec.temperature,
          numPredict: spec.maxTokens,
          maxRetries: MAX_RETRIES,
        },
      };
  }
}

const HOSTED_PROVIDERS: readonly string[] = ['openai', 'anthropic', 'ollama'] satisfies HostedModelProvider[];

/**
 * The model for jobs that name none: SWITCHYARD_MODEL_PROVIDER (openai, anthropic or ollama) with
 * SWITCHYARD_MODEL_NAME. Undefined when either is unset or the provider is not one of those.
 */
export function defaultModelSpecFromEnv(env: NodeJS.ProcessEnv = process.env): ModelSpec | undefined {
  const provider = setting(env, 'SWITCHYARD_MODEL_PROVIDER');
  const name = setting(env, 'SWITCHYARD_MODEL_NAME');
  if (provider === undefined || name === undefined || !HOSTED_PROVIDERS.includes(provider)) return undefined;
  // Parsing (rather than casting) keeps the result a ModelSpec by construction.
  return ModelSpecSchema.parse({ provider, name });
}

/** An environment variable, with empty treated as unset (compose files often pass `VAR=`). */
function setting(env: NodeJS.ProcessEnv, variable: string): string | undefined {
  const value = env[variable]?.trim();
  return value === undefined || value === '' ? undefined : value;
}
