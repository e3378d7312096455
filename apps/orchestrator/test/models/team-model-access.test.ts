import { ConfigError, parseConfig } from '@switchyard/contracts';
import { describe, expect, it } from 'vitest';
import { ModelConfigError, modelSettings, scrubSecret } from '../../src/models/index.ts';
import { modelChoices } from '../../src/models/model-choices.ts';
import { teamModelAccesses } from '../../src/models/team-models-registry.ts';

const DEPLOYMENT_ENV = {
  OPENAI_API_KEY: 'sk-deployment',
  OPENAI_BASE_URL: 'http://deployment.example/v1',
  SWITCHYARD_MODEL_PROVIDER: 'openai',
  SWITCHYARD_MODEL_NAME: 'deployment-model',
};

const accesses = (teams: Record<string, unknown>, env: NodeJS.ProcessEnv = DEPLOYMENT_ENV) => {
  const withKeys = Object.fromEntries(
    Object.entries(teams).map(([name, models], index) => [
      name,
      { apiKeys: [`${name}-key-${String(index).padStart(16, '0')}`], ...(models ? { models } : {}) },
    ]),
  );
  return teamModelAccesses(parseConfig({ servers: { s: { command: 'node' } }, teams: withKeys }), env);
};
const refusalOf = (build: () => unknown): ModelConfigError => {
  try {
    build();
  } catch (error) {
    if (error instanceof ModelConfigError) return error;
    throw error;
  }
  throw new Error('expected a ModelConfigError');
};

describe("a team's model access", () => {
  const teams = accesses({
    alpha: { openai: { apiKey: 'sk-alpha', baseUrl: 'http://alpha.example/v1' } },
    beta: { anthropic: { apiKey: 'sk-ant-beta' }, default: { provider: 'anthropic', name: 'claude-b' } },
    gamma: undefined,
    delta: { useDeploymentKeys: true, allow: ['openai'] },
  });
  const of = (team: string) => {
    const access = teams.get(team);
    if (!access) throw new Error(`no access for ${team}`);
    return access;
  };

  it('uses only the team its own key and endpoint, nothing of the deployment mixed in', () => {
    const settings = modelSettings({ provider: 'openai', name: 'm' }, of('alpha'));
    expect(settings.fields).toMatchObject({
      apiKey: 'sk-alpha',
      configuration: { baseURL: 'http://alpha.example/v1' },
    });
  });

  it('refuses a provider the team has no key for, naming the key to set, without the deployment fallback', () => {
    const error = refusalOf(() => modelSettings({ provider: 'anthropic', name: 'c' }, of('alpha')));
    expect(error.setting).toBe('teams.alpha.models.anthropic');
    expect(error.message).toMatch(/team alpha has no key for provider "anthropic".*useDeploymentKeys is off/);
    const beta = refusalOf(() => modelSettings({ provider: 'openai', name: 'm' }, of('beta')));
    expect(beta.message).not.toContain('sk-deployment');
  });

  it('keeps the deployment keys for a team without models, and for one with useDeploymentKeys', () => {
    for (const team of ['gamma', 'delta']) {
      expect(modelSettings({ provider: 'openai', name: 'm' }, of(team)).fields).toMatchObject({
        apiKey: 'sk-deployment',
      });
    }
  });

  it('narrows the providers to allow', () => {
    const error = refusalOf(() =>
      modelSettings({ provider: 'scripted', script: [{ final: 'x' }] }, of('delta')),
    );
    expect(error.setting).toBe('teams.delta.models.allow');
    expect(modelSettings({ provider: 'scripted', script: [{ final: 'x' }] }, of('alpha')).provider).toBe(
      'scripted',
    );
  });

  it("takes the team's default model, else the deployment's when the team may use its provider", () => {
    expect(of('beta').defaultModel).toEqual({ provider: 'anthropic', name: 'claude-b' });
    expect(of('alpha').defaultModel).toEqual({ provider: 'openai', name: 'deployment-model' });
    expect(of('gamma').defaultModel).toEqual({ provider: 'openai', name: 'deployment-model' });
    const noOpenAi = accesses({ eps: { anthropic: { apiKey: 'k' } } }).get('eps');
    expect(noOpenAi?.defaultModel).toBeUndefined();
    expect(noOpenAi?.noDefaultHint).toBe('team eps has no default model; set teams.eps.models.default');
  });

  it('lists what a team may use, and whose keys, never a key', () => {
    const alpha = modelChoices('alpha', of('alpha'));
    expect(alpha).toEqual({
      team: 'alpha',
      default: { provider: 'openai', name: 'deployment-model' },
      providers: [
        { provider: 'openai', keys: 'team' },
        { provider: 'scripted', keys: 'none' },
      ],
    });
    expect(modelChoices('gamma', of('gamma')).providers.map((entry) => entry.provider)).toEqual([
      'openai',
      'ollama',
      'scripted',
    ]);
    expect(JSON.stringify([alpha, modelChoices('beta', of('beta'))])).not.toMatch(/sk-/);
  });

  it('stops start-up on a default the provider refuses, naming the key', () => {
    try {
      accesses({
        zeta: { anthropic: { apiKey: 'k' }, default: { provider: 'anthropic', name: 'c', temperature: 1.5 } },
      });
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).key).toBe('teams.zeta.models.default.temperature');
    }
  });
});

describe('scrubSecret', () => {
  it('drops the key a call was made with and any key an OpenAI-style 401 quotes', () => {
    const text =
      '401 Incorrect API key provided: sk-other****1234. You can find your key at … sk-alpha-123 again';
    const scrubbed = scrubSecret(text, 'sk-alpha-123');
    expect(scrubbed).toBe(
      '401 Incorrect API key provided: [redacted] You can find your key at … [redacted] again',
    );
  });
});
