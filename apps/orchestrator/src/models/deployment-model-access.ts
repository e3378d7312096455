import type { ModelProviderName } from '@switchyard/contracts';
import type { ModelAccess, ProviderEndpoint } from './model-access.ts';
import { ModelConfigError } from './model-config-error.ts';
import { type HostedModelProvider, type ModelSpec, ModelSpecSchema } from './model-spec.ts';

const HOSTED_PROVIDERS: readonly string[] = ['openai', 'anthropic', 'ollama'] satisfies HostedModelProvider[];

/**
 * The deployment's models, from the orchestrator's environment: OPENAI_API_KEY / OPENAI_BASE_URL,
 * ANTHROPIC_API_KEY / ANTHROPIC_BASE_URL, OLLAMA_BASE_URL, and SWITCHYARD_MODEL_PROVIDER + _NAME as the
 * default. What a team without `models` in the config uses.
 */
export function deploymentModelAccess(env: NodeJS.ProcessEnv = process.env): ModelAccess {
  return {
    refusal: () => undefined,
    endpoint: (provider) => deploymentEndpoint(provider, env),
    source: (provider) => (provider === 'scripted' || provider === 'ollama' ? 'none' : 'deployment'),
    defaultModel: defaultModelSpecFromEnv(env),
    noDefaultHint:
      'this deployment has no default model; set SWITCHYARD_MODEL_PROVIDER and SWITCHYARD_MODEL_NAME',
  };
}

/** A hosted provider as the environment configures it; throws ModelConfigError naming the variable. */
export function deploymentEndpoint(provider: HostedModelProvider, env: NodeJS.ProcessEnv): ProviderEndpoint {
  switch (provider) {
    case 'openai': {
      const baseUrl = setting(env, 'OPENAI_BASE_URL');
      const apiKey = setting(env, 'OPENAI_API_KEY');
      if (apiKey === undefined && baseUrl === undefined)
        throw new ModelConfigError(
          'OPENAI_API_KEY',
          'provider "openai" needs OPENAI_API_KEY, or OPENAI_BASE_URL for a local OpenAI-compatible server',
        );
      return endpoint(apiKey, baseUrl);
    }
    case 'anthropic': {
      const apiKey = setting(env, 'ANTHROPIC_API_KEY');
      if (apiKey === undefined)
        throw new ModelConfigError('ANTHROPIC_API_KEY', 'provider "anthropic" needs ANTHROPIC_API_KEY');
      return endpoint(apiKey, setting(env, 'ANTHROPIC_BASE_URL'));
    }
    case 'ollama':
      return endpoint(undefined, setting(env, 'OLLAMA_BASE_URL'));
  }
}

/** Whether the environment has what `provider` needs (for GET /v1/models); scripted always does. */
export function deploymentHas(provider: ModelProviderName, env: NodeJS.ProcessEnv): boolean {
  if (provider === 'scripted') return true;
  try {
    deploymentEndpoint(provider, env);
    return true;
  } catch (error) {
    if (error instanceof ModelConfigError) return false;
    throw error;
  }
}

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

function endpoint(apiKey: string | undefined, baseUrl: string | undefined): ProviderEndpoint {
  return { ...(apiKey === undefined ? {} : { apiKey }), ...(baseUrl === undefined ? {} : { baseUrl }) };
}

/** An environment variable, with empty treated as unset (compose files often pass `VAR=`). */
function setting(env: NodeJS.ProcessEnv, variable: string): string | undefined {
  const value = env[variable]?.trim();
  return value === undefined || value === '' ? undefined : value;
}
