import { describe, expect, it } from 'vitest';
import { parseConfig, WORKER_UNUSED_SECRETS } from '../src/index.ts';
import { errorOf } from './config-error.ts';

const servers = { docs: { command: 'node' } };
const withModels = (models: unknown, env: NodeJS.ProcessEnv = {}) =>
  parseConfig({ servers, teams: { alpha: { apiKeys: ['alpha-key-0000000000000001'], models } } }, env);

describe('teams.<team>.models', () => {
  it('expands the keys from the environment and defaults useDeploymentKeys to off', () => {
    const config = withModels(
      {
        openai: { apiKey: '${ALPHA_OPENAI_KEY}', baseUrl: 'http://127.0.0.1:9/v1' },
        anthropic: { apiKey: '${ALPHA_ANTHROPIC_KEY}' },
        default: { provider: 'openai', name: 'gpt-4o-mini' },
      },
      { ALPHA_OPENAI_KEY: 'sk-alpha', ALPHA_ANTHROPIC_KEY: 'sk-ant-alpha' },
    );
    expect(config.teams.alpha?.models).toEqual({
      openai: { apiKey: 'sk-alpha', baseUrl: 'http://127.0.0.1:9/v1' },
      anthropic: { apiKey: 'sk-ant-alpha' },
      default: { provider: 'openai', name: 'gpt-4o-mini' },
      useDeploymentKeys: false,
    });
  });

  it('is absent for a team that sets none (the deployment keys, as before)', () => {
    expect(withModels(undefined).teams.alpha?.models).toBeUndefined();
  });

  it.each([
    [
      'a missing variable',
      { openai: { apiKey: '${UNSET_ALPHA_KEY_4711}' } },
      'teams.alpha.models.openai.apiKey',
      /UNSET_ALPHA_KEY_4711 is not set/,
    ],
    [
      'an empty key',
      { anthropic: { apiKey: '' } },
      'teams.alpha.models.anthropic.apiKey',
      /must not be empty/,
    ],
    [
      'openai with neither key nor URL',
      { openai: {} },
      'teams.alpha.models.openai.apiKey',
      /required unless baseUrl/,
    ],
    [
      'a base URL that is not http(s)',
      { openai: { apiKey: 'k', baseUrl: 'ftp://x' } },
      'teams.alpha.models.openai.baseUrl',
      /not an http\(s\) URL/,
    ],
    ['an unknown provider', { gemini: { apiKey: 'k' } }, 'teams.alpha.models', /Unrecognized key: "gemini"/],
    [
      'an allowed provider without a key',
      { openai: { apiKey: 'k' }, allow: ['openai', 'anthropic'] },
      'teams.alpha.models.allow.1',
      /anthropic has no entry/,
    ],
    [
      'a default without a key',
      { openai: { apiKey: 'k' }, default: { provider: 'anthropic', name: 'c' } },
      'teams.alpha.models.default.provider',
      /anthropic has no entry/,
    ],
    [
      'a default outside allow',
      { openai: { apiKey: 'k' }, allow: ['scripted'], default: { provider: 'openai', name: 'm' } },
      'teams.alpha.models.default.provider',
      /not in this team's models.allow/,
    ],
  ])('refuses %s, naming the key', (_what, models, key, reason) => {
    const error = errorOf(() => withModels(models));
    expect(error.key).toBe(key);
    expect(error.reason).toMatch(reason);
  });

  it('takes useDeploymentKeys as leave to allow a provider without an entry', () => {
    const config = withModels({ useDeploymentKeys: true, allow: ['anthropic'] });
    expect(config.teams.alpha?.models).toMatchObject({ allow: ['anthropic'], useDeploymentKeys: true });
  });

  it('lets the worker, which never reads them, keep the secrets and a base URL unexpanded', () => {
    const config = parseConfig(
      {
        servers,
        teams: {
          alpha: {
            apiKeys: ['${ALPHA_TEAM_KEY_UNSET}'],
            models: { openai: { apiKey: '${ALPHA_OPENAI_UNSET}', baseUrl: '${ALPHA_OPENAI_URL_UNSET}' } },
          },
        },
      },
      {},
      undefined,
      { unusedSecrets: WORKER_UNUSED_SECRETS },
    );
    expect(config.teams.alpha?.models?.openai?.baseUrl).toBe('${ALPHA_OPENAI_URL_UNSET}');
  });
});
