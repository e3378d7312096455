import { createLogger } from '@switchyard/telemetry';
import { describe, expect, it } from 'vitest';
import { retryWhileDown } from '../src/runtime/retry-while-down.ts';

const log = createLogger('retry-test');
log.level = 'silent';
const refused = () =>
  Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });

describe('start-up work while a dependency is down', () => {
  it('is tried again until the database answers', async () => {
    let tries = 0;
    const result = await retryWhileDown(
      'migrating',
      async () => {
        tries += 1;
        if (tries < 3) throw refused();
        return 'migrated';
      },
      log,
    );
    expect(result).toBe('migrated');
    expect(tries).toBe(3);
  });

  it('fails at once on an error that is not an outage', async () => {
    let tries = 0;
    await expect(
      retryWhileDown(
        'migrating',
        async () => {
          tries += 1;
          throw Object.assign(new Error('syntax error at or near "CREAT"'), { code: '42601' });
        },
        log,
      ),
    ).rejects.toThrow('syntax error');
    expect(tries).toBe(1);
  });

  it('gives up once the wait is over', async () => {
    await expect(
      retryWhileDown(
        'migrating',
        async () => {
          throw refused();
        },
        log,
        100,
      ),
    ).rejects.toThrow('ECONNREFUSED');
  });
});
