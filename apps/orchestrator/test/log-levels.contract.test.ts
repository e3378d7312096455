import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contractBackends, type OpenedStore } from '../../../libs/contracts/test/contract-backends.ts';
import { type LogLevels, logLevelClient, logLevels } from '../src/gateway/log-levels.ts';

describe.each(contractBackends)('LogLevels on $name', (backend) => {
  let opened: OpenedStore | undefined;
  let levels: LogLevels;

  beforeAll(async () => {
    opened = await backend.open();
    levels = logLevels(opened.store);
  });
  afterAll(async () => {
    await opened?.close();
  });

  it('keeps the last level a client set, per team and client', async () => {
    const client = logLevelClient('alpha-key');
    expect(await levels.get('alpha', client)).toBeUndefined();
    await levels.set('alpha', client, 'warning');
    await levels.set('alpha', client, 'error');
    expect(await levels.get('alpha', client)).toBe('error');
    expect(await levels.get('beta', client)).toBeUndefined();
    expect(await levels.get('alpha', logLevelClient('another-key'))).toBeUndefined();
  });

  it('names a client by a digest of its key, never the key', () => {
    const client = logLevelClient('secret-key-0001');
    expect(client).toMatch(/^[0-9a-f]{32}$/);
    expect(client).not.toContain('secret');
  });
});
