import type { ModelChoices } from '@switchyard/client';
import { table } from '../output/table.ts';

/**
 * The team's default model in the `--model <provider>:<name>` form `jobs submit` takes, then a row per
 * provider with whose keys it uses: `team` (teams.<team>.models), `deployment` (the orchestrator's
 * environment) or `none` (a provider that needs no key). Keys themselves never reach the API's answer.
 */
export function modelsText(choices: ModelChoices): string {
  const preset = choices.default
    ? `default model ${choices.default.provider}:${choices.default.name}`
    : 'no default model: an agent job names one (--model <provider>:<name>)';
  return `team ${choices.team}, ${preset}\n\n${table(
    choices.providers.map((choice) => ({ provider: choice.provider, keys: choice.keys })),
  )}`;
}
