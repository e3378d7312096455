import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cancelRequests, type ToolCallCancel, ToolCallCancelSchema, type Unsubscribe } from '../src/index.ts';
import { cancelPayloads } from '../src/store/postgres/cancel-requests-postgres.ts';
import { Collected, contractBackends, type OpenedStore } from './contract-backends.ts';

describe.each(contractBackends)('CancelRequests on $name', (backend) => {
  let opened: OpenedStore;
  const unsubscribes: Unsubscribe[] = [];
  beforeAll(async () => {
    opened = await backend.open();
  });
  afterAll(async () => {
    for (const unsubscribe of unsubscribes) await unsubscribe().catch(() => undefined);
    await opened?.close();
  });

  async function subscriber() {
    const heard = new Collected<string>();
    unsubscribes.push(
      await cancelRequests(opened.store).subscribe(heard.push, {
        connectionName: `${backend.name}-cancels-test`,
        onError: () => undefined,
      }),
    );
    return heard;
  }

  const parsed = (messages: string[]) =>
    messages.map((message) => ToolCallCancelSchema.parse(JSON.parse(message)));

  it('hands a request to every subscriber', async () => {
    const [first, second] = [await subscriber(), await subscriber()];
    const request: ToolCallCancel = {
      queue: 'tools.{notes}',
      ids: ['tc-1', 'tc-2'],
      reason: 'job cancelled',
    };
    await cancelRequests(opened.store).publish(request);
    for (const heard of [first, second]) {
      await heard.wait((messages) => messages.length >= 1);
      expect(parsed(heard.items)).toEqual([request]);
    }
  });

  it('delivers a request naming 500 calls whole, each message a valid request of the same queue', async () => {
    const heard = await subscriber();
    const ids = Array.from({ length: 500 }, (_, index) => `tc-${index}-${'x'.repeat(30)}`);
    await cancelRequests(opened.store).publish({ queue: 'tools.{search}', ids, reason: 'deadline' });
    const named = () => parsed(heard.items).flatMap((request) => request.ids ?? []);
    await heard.wait(() => named().length >= 500);
    expect(named()).toEqual(ids);
    for (const request of parsed(heard.items)) {
      expect(request).toMatchObject({ queue: 'tools.{search}', reason: 'deadline' });
    }
    // Redis carries it in one message (about 20 kB); PostgreSQL's payloads stay under 8000 bytes.
    if (backend.name === 'redis') expect(heard.items).toHaveLength(1);
    else {
      expect(heard.items.length).toBeGreaterThan(1);
      for (const message of heard.items) expect(Buffer.byteLength(message)).toBeLessThan(8_000);
    }
  });
});

describe('cancelPayloads', () => {
  it('keeps a request that fits as it is', () => {
    const request: ToolCallCancel = { queue: 'q', id: 'a', reason: 'r' };
    expect(cancelPayloads(request)).toEqual([JSON.stringify(request)]);
  });

  it('spreads the single id and the ids over parts under the limit, in order', () => {
    const request: ToolCallCancel = { queue: 'q', id: 'first', ids: ['b', 'c', 'd', 'e'], reason: 'r' };
    const parts = cancelPayloads(request, 45).map((part) => JSON.parse(part));
    expect(parts.length).toBeGreaterThan(1);
    expect(parts.flatMap((part) => part.ids)).toEqual(['first', 'b', 'c', 'd', 'e']);
    for (const part of parts) expect(part).toMatchObject({ queue: 'q', reason: 'r' });
  });

  it('refuses a call id that no notification can carry', () => {
    expect(() => cancelPayloads({ queue: 'q', ids: ['y'.repeat(100)], reason: 'r' }, 50)).toThrow(/too long/);
  });
});
