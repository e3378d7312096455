import { resolve } from 'node:path';
import {
  ConfigError,
  loadConfig,
  ORCHESTRATOR_UNUSED_SECRETS,
  WORKER_UNUSED_SECRETS,
} from '@switchyard/contracts';
import { describe, expect, it } from 'vitest';

const SHIPPED = resolve(import.meta.dirname, '../../../switchyard.yaml');

/** The repository's switchyard.yaml must not grant its tools to a key anyone can read in it. */
describe('the shipped switchyard.yaml', () => {
  it('refuses to start an orchestrator without SWITCHYARD_DEMO_KEY, naming the key', () => {
    const env = { ...process.env, SWITCHYARD_DEMO_KEY: undefined };
    let error: unknown;
    try {
      loadConfig(SHIPPED, env, { unusedSecrets: ORCHESTRATOR_UNUSED_SECRETS });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).key).toBe('teams.demo.apiKeys.0');
    expect((error as ConfigError).message).toContain('SWITCHYARD_DEMO_KEY');
  });

  it('gives the demo team exactly the key from the environment', () => {
    const key = 'a-key-only-this-test-knows-1234';
    const config = loadConfig(
      SHIPPED,
      { ...process.env, SWITCHYARD_DEMO_KEY: key },
      {
        unusedSecrets: ORCHESTRATOR_UNUSED_SECRETS,
      },
    );
    expect(Object.values(config.teams).flatMap((team) => team.apiKeys)).toEqual([key]);
    expect(config.operators.apiKeys).toEqual([]);
  });

  it('still starts a tool worker without it (workers never read team keys)', () => {
    const env = { ...process.env, SWITCHYARD_DEMO_KEY: undefined };
    expect(() => loadConfig(SHIPPED, env, { unusedSecrets: WORKER_UNUSED_SECRETS })).not.toThrow();
  });
});
