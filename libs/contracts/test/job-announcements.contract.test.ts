import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jobAnnouncements, type Unsubscribe } from '../src/index.ts';
import { notificationChannel, quotedChannel } from '../src/store/postgres/notification-channel.ts';
import { Collected, contractBackends, type OpenedStore } from './contract-backends.ts';

describe.each(contractBackends)('JobAnnouncements on $name', (backend) => {
  let opened: OpenedStore;
  let unsubscribe: Unsubscribe | undefined;
  const events = new Collected<string>();
  const cancels = new Collected<string>();
  const resumed = new Collected<true>();
  const errors: unknown[] = [];
  beforeAll(async () => {
    opened = await backend.open();
    unsubscribe = await jobAnnouncements(opened.store).listen(
      { onEvent: events.push, onCancel: cancels.push, onResumed: () => resumed.push(true) },
      {
        connectionName: `${opened.store.kind === 'postgres' ? opened.store.applicationName : 'test'}/job-events`,
        onError: (error) => errors.push(error),
      },
    );
  });
  afterAll(async () => {
    await unsubscribe?.().catch(() => undefined);
    await opened?.close();
  });

  it('wakes event watchers and cancel listeners, each on its own channel', async () => {
    const announcements = jobAnnouncements(opened.store);
    await announcements.announce('job-1');
    await announcements.cancel('job-2');
    await announcements.announce('job-3');
    await events.wait((items) => items.length >= 2);
    await cancels.wait((items) => items.length >= 1);
    expect(events.items).toEqual(['job-1', 'job-3']);
    expect(cancels.items).toEqual(['job-2']);
  });

  it.runIf(backend.name === 'postgres')(
    'listens again after its connection is cut, and says so',
    async () => {
      expect(await opened.cut({ pgSuffix: '/job-events', redisCommand: 'subscribe' })).toBeGreaterThan(0);
      await resumed.wait((items) => items.length >= 1);
      await jobAnnouncements(opened.store).announce('job-after');
      await events.wait((items) => items.includes('job-after'));
      expect(errors.length).toBeGreaterThan(0);
    },
  );
});

describe('notificationChannel', () => {
  it('names a channel after its schema and topic', () => {
    expect(notificationChannel('switchyard_queues', 'outcomes')).toBe('switchyard_queues_outcomes');
  });

  it('keeps a long schema within 63 characters and apart from another that shares its start', () => {
    const [one, two] = [`${'a'.repeat(60)}_one`, `${'a'.repeat(60)}_two`];
    const channels = [notificationChannel(one, 'job_events'), notificationChannel(two, 'job_events')];
    for (const channel of channels) expect(channel.length).toBeLessThanOrEqual(63);
    expect(channels[0]).not.toBe(channels[1]);
  });

  it('refuses what would need quoting', () => {
    expect(() => notificationChannel('Bad-Schema', 'x')).toThrow(/not a valid notification channel/);
    expect(() => quotedChannel('a"; DROP')).toThrow();
  });
});
