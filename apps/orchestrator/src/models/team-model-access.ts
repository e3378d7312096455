import type { ModelProviderName, TeamModels } from '@switchyard/contracts';
import { deploymentEndpoint, deploymentModelAccess } from './deployment-model-access.ts';
import type { ModelAccess, ProviderEndpoint } from './model-access.ts';
import { ModelConfigError } from './model-config-error.ts';
import type { HostedModelProvider, ModelSpec } from './model-spec.ts';

/**
 * The models of one team (docs/configuration.md, teams.<name>.models). Without `models` the team uses the
 * deployment's (environment) as before. With it, a provider with an entry is used with the team's own key
 * and endpoint only; a provider without one is refused, or uses the deployment's key when
 * `useDeploymentKeys` says so; `allow` narrows the providers further. `defaultModel` is the team's
 * `default`, else the deployment's when the team may use its provider. `preset` is the team's `default`,
 * already checked as a model spec (team-models-registry.ts).
 */
export function teamModelAccess(
  team: string,
  models: TeamModels | undefined,
  preset: ModelSpec | undefined,
  env: NodeJS.ProcessEnv = process.env,
): ModelAccess {
  const deployment = deploymentModelAccess(env);
  if (!models) return deployment;
  const key = `teams.${team}.models`;
  const refusal = (provider: ModelProviderName): ModelConfigError | undefined => {
    if (models.allow && !models.allow.includes(provider))
      return new ModelConfigError(
        `${key}.allow`,
        `team ${team} may not use provider "${provider}" (not in ${key}.allow: ${models.allow.join(', ')})`,
      );
    if (provider === 'scripted' || models[provider] !== undefined || models.useDeploymentKeys)
      return undefined;
    return new ModelConfigError(
      `${key}.${provider}`,
      `team ${team} has no key for provider "${provider}" (no ${key}.${provider}, and ${key}.useDeploymentKeys is off)`,
    );
  };
  const endpoint = (provider: HostedModelProvider): ProviderEndpoint => {
    const refused = refusal(provider);
    if (refused) throw refused;
    const own = models[provider];
    return own ? { ...own } : deploymentEndpoint(provider, env);
  };
  const inherited = deployment.defaultModel;
  return {
    refusal,
    endpoint,
    source: (provider) =>
      provider === 'scripted'
        ? 'none'
        : models[provider] !== undefined
          ? 'team'
          : deployment.source(provider),
    defaultModel: preset ?? (inherited && !refusal(inherited.provider) ? inherited : undefined),
    noDefaultHint: `team ${team} has no default model; set ${key}.default`,
  };
}

/** A team no longer in the config (its job was submitted before a change) may use no model. */
export function removedTeamModelAccess(team: string): ModelAccess {
  const refused = () => new ModelConfigError(`teams.${team}`, `team ${team} is no longer configured`);
  return {
    refusal: (provider) => (provider === 'scripted' ? undefined : refused()),
    endpoint: () => {
      throw refused();
    },
    source: () => 'none',
    defaultModel: undefined,
    noDefaultHint: `team ${team} is no longer configured`,
  };
}
