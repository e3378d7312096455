import { Inject, Injectable } from '@nestjs/common';
import { ConfigError, type SwitchyardConfig, type TeamModels } from '@switchyard/contracts';
import { CONFIG } from '../runtime/tokens.ts';
import type { ModelAccess } from './model-access.ts';
import { type ModelSpec, ModelSpecSchema } from './model-spec.ts';
import { removedTeamModelAccess, teamModelAccess } from './team-model-access.ts';

/**
 * Every team's model access, built once from the config and the orchestrator's environment. main.ts
 * calls `teamModelAccesses` before Nest starts, so a team entry the contracts schema could not check
 * (a base URL given as `${VAR}`, a default model a provider refuses) stops the process as a config
 * error naming the key rather than failing a job later.
 */
@Injectable()
export class TeamModelsRegistry {
  private readonly teams: Map<string, ModelAccess>;

  constructor(@Inject(CONFIG) config: SwitchyardConfig) {
    this.teams = teamModelAccesses(config, process.env);
  }

  /** The access of a team's jobs; a team removed from the config since may use no hosted model. */
  forTeam(team: string): ModelAccess {
    return this.teams.get(team) ?? removedTeamModelAccess(team);
  }
}

/** Each team's access; throws ConfigError naming the first bad `teams.<team>.models` key. */
export function teamModelAccesses(
  config: SwitchyardConfig,
  env: NodeJS.ProcessEnv,
): Map<string, ModelAccess> {
  return new Map(
    Object.entries(config.teams).map(([team, { models }]) => [
      team,
      teamModelAccess(team, models, models && checkedTeamModels(team, models), env),
    ]),
  );
}

/** The checks that need the expanded values; returns the team's default model as a job's model spec. */
function checkedTeamModels(team: string, models: TeamModels): ModelSpec | undefined {
  const key = `teams.${team}.models`;
  for (const provider of ['openai', 'anthropic', 'ollama'] as const) {
    const baseUrl = models[provider]?.baseUrl;
    if (baseUrl !== undefined && !(URL.canParse(baseUrl) && /^https?:$/.test(new URL(baseUrl).protocol)))
      throw new ConfigError(`${key}.${provider}.baseUrl`, 'not an http(s) URL');
  }
  if (!models.default) return undefined;
  const parsed = ModelSpecSchema.safeParse(models.default);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  throw new ConfigError([`${key}.default`, ...(issue?.path ?? [])].join('.'), issue?.message ?? 'invalid');
}
