import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiClient, Json } from '../support/api-client.ts';
import { Deployment, type Orchestrator, TEAM_KEYS } from '../support/deployment.ts';
import { exampleServer } from '../support/fleet.ts';
import { OpenAiStub } from '../support/openai-stub.ts';

const secret = (team: string) => `sk-${team}-${randomBytes(12).toString('hex')}`;
const GAMMA_KEY = 'gamma-key-0000000000000005';
const DELTA_KEY = 'delta-key-0000000000000006';
const EPS_KEY = 'eps-key-00000000000000007';

/**
 * Per-team model keys (teams.<team>.models) through a real orchestrator and a real OpenAI-compatible
 * HTTP server on loopback that records the key of every model call: a team's job reaches the model with
 * its own key and never another's, the deployment's key is used only where the config says so, a
 * provider a team has no key for is a 400 at submit, and no key shows in jobs, events, errors or logs.
 */
describe('per-team model keys', () => {
  let stub: OpenAiStub;
  let deployment: Deployment;
  let orchestrator: Orchestrator;
  const keys = {
    alpha: secret('alpha'),
    beta: secret('beta'),
    anthropicSearchers: secret('searchers'),
    deployment: secret('deployment'),
    eps: secret('eps'),
  };
  const everyKey = Object.values(keys);
  const api = (team: keyof typeof TEAM_KEYS | 'gamma' | 'delta' | 'eps'): ApiClient => {
    const own = { gamma: GAMMA_KEY, delta: DELTA_KEY, eps: EPS_KEY } as Record<string, string>;
    return orchestrator.api().withKey(own[team] ?? TEAM_KEYS[team as keyof typeof TEAM_KEYS]);
  };
  /** Submits an agent job, waits for its end (on its events) and returns the job and every event. */
  const run = async (team: Parameters<typeof api>[0], body: Record<string, unknown>) => {
    const submitted = await api(team).submit({ kind: 'agent', input: `hello from ${team}`, ...body });
    expect(submitted.status, JSON.stringify(submitted.body)).toBe(201);
    const events = await api(team).events(submitted.body.id);
    return { job: (await api(team).job(submitted.body.id)) as Json, events };
  };
  const expectNoKeys = (what: string, value: unknown) => {
    const text = typeof value === 'string' ? value : JSON.stringify(value);
    for (const key of everyKey) expect(text.includes(key), `${what} holds a model key`).toBe(false);
  };

  beforeAll(async () => {
    stub = await OpenAiStub.start([keys.eps]);
    // The config names the keys as ${VAR}: the test's own parse and the orchestrator both expand them.
    Object.assign(process.env, {
      SYTEST_ALPHA_OPENAI_KEY: keys.alpha,
      SYTEST_BETA_OPENAI_KEY: keys.beta,
      SYTEST_SEARCHERS_ANTHROPIC_KEY: keys.anthropicSearchers,
      SYTEST_EPS_OPENAI_KEY: keys.eps,
    });
    const own = (variable: string) => ({ apiKey: `\${${variable}}`, baseUrl: stub.url });
    deployment = new Deployment('model-keys', () => ({ search: exampleServer('search') }), {
      teams: {
        alpha: {
          apiKeys: [TEAM_KEYS.alpha],
          models: {
            openai: own('SYTEST_ALPHA_OPENAI_KEY'),
            default: { provider: 'openai', name: 'alpha-default-model' },
          },
        },
        beta: { apiKeys: [TEAM_KEYS.beta], models: { openai: own('SYTEST_BETA_OPENAI_KEY') } },
        // Keys for another provider only, and no leave to use the deployment's.
        searchers: {
          apiKeys: [TEAM_KEYS.searchers],
          models: { anthropic: { apiKey: `\${SYTEST_SEARCHERS_ANTHROPIC_KEY}` } },
        },
        // No models: the deployment's keys, as before.
        gamma: { apiKeys: [GAMMA_KEY] },
        // The deployment's keys by leave of the config, for openai only.
        delta: { apiKeys: [DELTA_KEY], models: { useDeploymentKeys: true, allow: ['openai'] } },
        // A key the model server refuses, quoting it.
        eps: { apiKeys: [EPS_KEY], models: { openai: own('SYTEST_EPS_OPENAI_KEY') } },
      },
    });
    Object.assign(deployment.processEnv, {
      OPENAI_API_KEY: keys.deployment,
      OPENAI_BASE_URL: stub.url,
      ANTHROPIC_API_KEY: '',
      SWITCHYARD_MODEL_PROVIDER: 'openai',
      SWITCHYARD_MODEL_NAME: 'deployment-default-model',
    });
    orchestrator = await deployment.startOrchestrator('o1');
  });

  afterAll(async () => {
    await deployment?.close();
    await stub?.close();
  });

  it("sends each team's job to the model with that team's key, and no other", async () => {
    const alpha = await run('alpha', { model: { provider: 'openai', name: 'alpha-model' } });
    expect(alpha.job).toMatchObject({ status: 'succeeded', result: 'answer from alpha-model' });
    expect(stub.keysSeen()).toEqual([keys.alpha]);

    const beta = await run('beta', { model: { provider: 'openai', name: 'beta-model' } });
    expect(beta.job).toMatchObject({ status: 'succeeded', result: 'answer from beta-model' });
    expect(stub.keysSeen()).toEqual([keys.alpha, keys.beta]);
    for (const [what, value] of Object.entries({ alpha, beta })) expectNoKeys(what, value);
  });

  it("gives a job without a model its team's default, else the deployment's", async () => {
    const alpha = await run('alpha', {});
    expect(alpha.job).toMatchObject({
      status: 'succeeded',
      request: { model: { provider: 'openai', name: 'alpha-default-model' } },
    });
    const beta = await run('beta', {});
    expect(beta.job.request.model).toEqual({ provider: 'openai', name: 'deployment-default-model' });
    expect(stub.requests.slice(-2)).toEqual([
      { authorization: `Bearer ${keys.alpha}`, model: 'alpha-default-model' },
      { authorization: `Bearer ${keys.beta}`, model: 'deployment-default-model' },
    ]);
  });

  it("uses the deployment's key only for a team without models or with useDeploymentKeys", async () => {
    for (const team of ['gamma', 'delta'] as const) {
      const { job } = await run(team, { model: { provider: 'openai', name: `${team}-model` } });
      expect(job.status, JSON.stringify(job.error)).toBe('succeeded');
    }
    expect(stub.keysSeen().slice(-2)).toEqual([keys.deployment, keys.deployment]);
  });

  it('refuses at submit, with a 400 naming why, a provider the team has no key for or may not use', async () => {
    const before = stub.requests.length;
    const searchers = await api('searchers').submit({
      kind: 'agent',
      input: 'hi',
      model: { provider: 'openai', name: 'm' },
    });
    expect(searchers.status).toBe(400);
    expect(searchers.body).toMatchObject({
      type: 'urn:switchyard:problem:validation-failed',
      detail: expect.stringContaining('team searchers has no key for provider "openai"'),
    });
    expect(searchers.body.detail).toContain('teams.searchers.models.openai');
    const noDefault = await api('searchers').submit({ kind: 'agent', input: 'hi' });
    expect(noDefault.status).toBe(400);
    expect(noDefault.body.detail).toContain('set teams.searchers.models.default');
    const delta = await api('delta').submit({
      kind: 'agent',
      input: 'hi',
      model: { provider: 'scripted', script: [{ final: 'x' }] },
    });
    expect(delta.status).toBe(400);
    expect(delta.body.detail).toContain('not in teams.delta.models.allow');
    expect(stub.requests.length).toBe(before);
    expectNoKeys('the refusals', [searchers.body, noDefault.body, delta.body]);
  });

  it('lists what each team may use, with whose keys, and never a key', async () => {
    const alpha = await api('alpha').client.listModels();
    expect(alpha).toEqual({
      team: 'alpha',
      default: { provider: 'openai', name: 'alpha-default-model' },
      providers: [
        { provider: 'openai', keys: 'team' },
        { provider: 'scripted', keys: 'none' },
      ],
    });
    const searchers = await api('searchers').client.listModels();
    expect(searchers.providers).toEqual([
      { provider: 'anthropic', keys: 'team' },
      { provider: 'scripted', keys: 'none' },
    ]);
    expect(searchers.default).toBeNull();
    expectNoKeys('GET /v1/models', [alpha, searchers]);
  });

  it('fails a job whose key the model refuses without repeating the key anywhere', async () => {
    const eps = await run('eps', { model: { provider: 'openai', name: 'eps-model' } });
    expect(eps.job.status).toBe('failed');
    expect(eps.job.error).toMatch(/the model \(openai\) failed: .*Incorrect API key provided: \[redacted\]/);
    expect(stub.keysSeen().at(-1)).toBe(keys.eps);
    expectNoKeys('the failed job and its events', eps);
  });

  it("writes no team's key to the orchestrator's log", () => {
    expectNoKeys('stdout', orchestrator.process.lines.join('\n'));
    expectNoKeys('stderr', orchestrator.process.stderr.join(''));
  });

  it.each([
    [
      'a key from an unset variable',
      `{ apiKey: "\${SYTEST_MODEL_KEY_NEVER_SET}" }`,
      /teams\.alpha\.models\.openai\.apiKey: environment variable SYTEST_MODEL_KEY_NEVER_SET is not set/,
    ],
    ['an empty key', '{ apiKey: "" }', /teams\.alpha\.models\.openai\.apiKey: must not be empty/],
    [
      'a base URL that is not one',
      `{ apiKey: k, baseUrl: "\${SYTEST_MODEL_URL:-not a url}" }`,
      /teams\.alpha\.models\.openai\.baseUrl: not an http\(s\) URL/,
    ],
  ])('stops at start-up on %s, naming the key', async (what, entry, reason) => {
    const path = deployment.path(`bad-models-${what.replaceAll(/\W+/g, '-')}.yaml`);
    writeFileSync(
      path,
      `servers:\n  search:\n    command: node\n    args: [x.js]\nteams:\n  alpha:\n    apiKeys: [${JSON.stringify(TEAM_KEYS.alpha)}]\n    models:\n      openai: ${entry}\n`,
    );
    const proc = deployment.startOrchestratorOn(path, `orchestrator with ${what}`);
    const code = await proc.exited;
    const stderr = proc.stderr.join('');
    expect(code, stderr).toBe(2);
    expect(stderr).toMatch(/switchyard orchestrator: config error: /);
    expect(stderr).toMatch(reason);
  });
});
