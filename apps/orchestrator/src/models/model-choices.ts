import { MODEL_PROVIDERS } from '@switchyard/contracts';
import type { ModelAccess } from './model-access.ts';
import type { ModelChoices } from './model-choices-schema.ts';
import { ModelConfigError } from './model-config-error.ts';

/** What `GET /v1/models` answers for a team: the providers a job of it may name now, and its default. */
export function modelChoices(team: string, access: ModelAccess): ModelChoices {
  const usable = MODEL_PROVIDERS.filter((provider) => {
    if (access.refusal(provider)) return false;
    if (provider === 'scripted') return true;
    try {
      access.endpoint(provider);
      return true;
    } catch (error) {
      if (error instanceof ModelConfigError) return false;
      throw error;
    }
  });
  const preset = access.defaultModel;
  return {
    team,
    default:
      preset && preset.provider !== 'scripted' ? { provider: preset.provider, name: preset.name } : null,
    providers: usable.map((provider) => ({ provider, keys: access.source(provider) })),
  };
}
