import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  progressRelayChannel,
  type RelayedCallMessage,
  type ToolCallLog,
  type ToolCallProgress,
  type Unsubscribe,
} from '../src/index.ts';
import { logPayload, progressPayload } from '../src/store/postgres/progress-relay-postgres.ts';
import { Collected, contractBackends, type OpenedStore } from './contract-backends.ts';

describe.each(contractBackends)('ProgressRelayChannel on $name', (backend) => {
  let opened: OpenedStore;
  let unsubscribe: Unsubscribe | undefined;
  const heard = new Collected<RelayedCallMessage>();
  beforeAll(async () => {
    opened = await backend.open();
    unsubscribe = await progressRelayChannel(opened.store).subscribe(heard.push, {
      connectionName: `${backend.name}-progress-test`,
      onError: () => undefined,
    });
  });
  afterAll(async () => {
    await unsubscribe?.().catch(() => undefined);
    await opened?.close();
  });

  it('hands each progress message to the subscriber', async () => {
    const progress: ToolCallProgress = {
      queue: 'tools.{notes}',
      id: 'tc-1',
      progress: 3,
      total: 10,
      message: 'three',
    };
    await progressRelayChannel(opened.store).publish(progress);
    await heard.wait((items) => items.some((item) => item.id === 'tc-1'));
    expect(heard.items.find((item) => item.id === 'tc-1')).toEqual(progress);
  });

  it('relays a message that escapes to more than 8000 bytes, cut on PostgreSQL only', async () => {
    const message = '\u0001'.repeat(2_000); // 12,000 bytes once escaped in JSON
    await progressRelayChannel(opened.store).publish({
      queue: 'tools.{notes}',
      id: 'tc-long',
      progress: 1,
      message,
    });
    await heard.wait((items) => items.some((item) => item.id === 'tc-long'));
    const relayed = heard.items.find((item) => item.id === 'tc-long') as ToolCallProgress;
    expect(relayed.progress).toBe(1);
    if (backend.name === 'redis') expect(relayed.message).toBe(message);
    else {
      expect(message.startsWith(relayed.message ?? 'absent')).toBe(true);
      expect((relayed.message ?? '').length).toBeGreaterThan(1_000);
    }
  });

  it('hands a log message to the subscriber on the same channel', async () => {
    const log: ToolCallLog = {
      queue: 'tools.{notes}',
      id: 'tc-log',
      log: { level: 'warning', logger: 'notes', data: { step: 2, text: 'disk nearly full' } },
    };
    await progressRelayChannel(opened.store).publish(log);
    await heard.wait((items) => items.some((item) => item.id === 'tc-log'));
    expect(heard.items.find((item) => item.id === 'tc-log')).toEqual(log);
  });
});

describe('logPayload', () => {
  it('keeps a log message that fits, and says what it dropped when one does not', () => {
    const log: ToolCallLog = { queue: 'q', id: 'a', log: { level: 'info', data: '\u0001'.repeat(3_000) } };
    expect(logPayload(log, 100_000)).toBe(JSON.stringify(log));
    const cut = JSON.parse(logPayload(log, 400)) as ToolCallLog;
    expect(cut.log.level).toBe('info');
    expect(cut.log.data).toMatch(/^\[log message of 18002 bytes, over what the relay carries\]$/);
  });
});

describe('progressPayload', () => {
  it('keeps a progress that fits as it is', () => {
    const progress: ToolCallProgress = { queue: 'q', id: 'a', progress: 1, message: 'm' };
    expect(progressPayload(progress)).toBe(JSON.stringify(progress));
  });

  it('never cuts through a surrogate pair, and stays under the limit', () => {
    const payload = progressPayload({ queue: 'q', id: 'a', progress: 1, message: '😀'.repeat(1_000) }, 101);
    expect(Buffer.byteLength(payload)).toBeLessThanOrEqual(101);
    const { message } = JSON.parse(payload) as ToolCallProgress;
    expect(message).toBe('😀'.repeat((message ?? '').length / 2));
  });

  it('drops the message when not even an empty one fits', () => {
    expect(JSON.parse(progressPayload({ queue: 'q', id: 'a', progress: 1, message: 'long' }, 20))).toEqual({
      queue: 'q',
      id: 'a',
      progress: 1,
    });
  });
});
