import type { ModelProviderName } from '@switchyard/contracts';
import type { HostedModelProvider, ModelSpec } from './model-spec.ts';

/** Where a hosted provider is reached and with which key; what a provider's LangChain class needs. */
export interface ProviderEndpoint {
  apiKey?: string;
  baseUrl?: string;
}

/** Whose credentials a provider is used with: the team's own (config), the deployment's (environment). */
export type KeySource = 'team' | 'deployment' | 'none';

/**
 * What one team's jobs may do with models: which providers they may name, with whose keys, and the model
 * of a job that names none. Built from the config and the orchestrator's environment at start-up.
 */
export interface ModelAccess {
  /** Why a job of this team may not name `provider` (a ModelConfigError), or undefined when it may. */
  refusal(provider: ModelProviderName): Error | undefined;
  /** The endpoint and key of `provider`; throws ModelConfigError saying what is missing. */
  endpoint(provider: HostedModelProvider): ProviderEndpoint;
  /** Whose key `provider` is used with (`none`: scripted, or a provider that takes no key). */
  source(provider: ModelProviderName): KeySource;
  /** The model of a job that names none. */
  readonly defaultModel: ModelSpec | undefined;
  /** What to set when there is no default model. */
  readonly noDefaultHint: string;
}
