import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contractBackends, type OpenedStore } from '../../../libs/contracts/test/contract-backends.ts';
import { TokenCache } from '../src/credentials/token-cache.ts';
import { type TokenCacheStore, tokenCacheStore } from '../src/credentials/token-cache-store.ts';

/** A promise the test settles by hand: a renewal that is still running, or a holder that hangs. */
function gate<T = void>() {
  let open: (value: T) => void = () => undefined;
  const opened = new Promise<T>((resolve) => {
    open = resolve;
  });
  return { opened, open };
}

describe.each(contractBackends)('TokenCache on $name', (backend) => {
  let opened: OpenedStore | undefined;
  let entries: TokenCacheStore;
  const key = { team: 'team-a', issuer: 'https://auth.example.com', server: 'docs' };

  beforeAll(async () => {
    opened = await backend.open();
    entries = tokenCacheStore(opened.store);
  });
  afterAll(async () => {
    await opened?.close();
  });

  it('keys entries by identity: another team, issuer or server finds nothing', async () => {
    expect(await entries.get(key)).toBeUndefined();
    await entries.put(key, '{"accessToken":"one","renewAt":1}', 60_000);
    expect(await entries.get(key)).toBe('{"accessToken":"one","renewAt":1}');
    expect(await entries.get({ ...key, team: 'team-b' })).toBeUndefined();
    expect(await entries.get({ ...key, issuer: 'https://other.example.com' })).toBeUndefined();
    expect(await entries.get({ ...key, server: 'search' })).toBeUndefined();
    await entries.put(key, '{"accessToken":"two","renewAt":1}', 60_000);
    expect(await entries.get(key)).toBe('{"accessToken":"two","renewAt":1}');
  });

  it('keys a DPoP-bound token by its key as well: neither the bearer entry nor another key finds it', async () => {
    const bearer = { ...key, server: 'bound' };
    const bound = { ...bearer, dpopKey: 'jkt-1' };
    await entries.put(bound, '{"accessToken":"bound","renewAt":1}', 60_000);
    expect(await entries.get(bound)).toBe('{"accessToken":"bound","renewAt":1}');
    expect(await entries.get(bearer)).toBeUndefined();
    expect(await entries.get({ ...bound, dpopKey: 'jkt-2' })).toBeUndefined();
  });

  it('tells apart identities whose parts would join to the same text', async () => {
    const left = { team: 'a:b', issuer: 'c', server: 'd' };
    const right = { team: 'a', issuer: 'b:c', server: 'd' };
    await entries.put(left, '{"accessToken":"left","renewAt":1}', 60_000);
    expect(await entries.get(right)).toBeUndefined();
  });

  it('forgets an entry when its keep time is over', async () => {
    const short = { ...key, server: 'short' };
    await entries.put(short, '{"accessToken":"brief","renewAt":1}', 20);
    // Time itself is what is tested: the entry must outlive its 20 ms.
    await delay(60);
    expect(await entries.get(short)).toBeUndefined();
  });

  it('marks an entry for renewal only while it holds the rejected token, keeping the rest', async () => {
    const entry = { accessToken: 'current', tokenType: 'Bearer', renewAt: 123, refreshToken: 'rotated' };
    await entries.put(key, JSON.stringify(entry), 60_000);
    await entries.expireIfToken(key, 'an-older-token');
    expect(JSON.parse((await entries.get(key)) ?? '')).toEqual(entry);
    await entries.expireIfToken(key, 'current');
    expect(JSON.parse((await entries.get(key)) ?? '')).toEqual({ ...entry, renewAt: 0 });
    // No entry: nothing is created.
    await entries.expireIfToken({ ...key, team: 'nobody' }, 'current');
    expect(await entries.get({ ...key, team: 'nobody' })).toBeUndefined();
  });

  it('keeps the keep time of an entry it marks', async () => {
    const short = { ...key, server: 'marked' };
    await entries.put(short, '{"accessToken":"t","renewAt":5}', 40);
    await entries.expireIfToken(short, 't');
    await delay(80);
    expect(await entries.get(short)).toBeUndefined();
  });

  it('lets one holder renew at a time, and the next once it is done', async () => {
    const renewing = gate();
    const running = gate();
    const first = entries.withRenewal(key, 10_000, async () => {
      running.open();
      await renewing.opened;
      return 'first';
    });
    await running.opened;
    let ranSecond = false;
    expect(
      await entries.withRenewal(key, 10_000, async () => {
        ranSecond = true;
      }),
    ).toEqual({ held: false });
    expect(ranSecond).toBe(false);
    // Another identity is not held up.
    expect(await entries.withRenewal({ ...key, team: 'team-b' }, 10_000, async () => 'b')).toEqual({
      held: true,
      value: 'b',
    });
    renewing.open();
    expect(await first).toEqual({ held: true, value: 'first' });
    expect(await entries.withRenewal(key, 10_000, async () => 'next')).toEqual({ held: true, value: 'next' });
  });

  it('releases the lease when the renewal fails', async () => {
    await expect(
      entries.withRenewal(key, 10_000, async () => {
        throw new Error('token endpoint down');
      }),
    ).rejects.toThrow('token endpoint down');
    expect(await entries.withRenewal(key, 10_000, async () => 'after')).toEqual({
      held: true,
      value: 'after',
    });
  });

  it('gives a dead holder’s lease to another once it ran out, and the late holder cannot release it', async () => {
    const lateKey = { ...key, server: 'lease' };
    const hung = gate();
    const hungRunning = gate();
    const late = entries.withRenewal(lateKey, 30, async () => {
      hungRunning.open();
      await hung.opened;
    });
    await hungRunning.opened;
    // Time itself is what is tested: the 30 ms lease must run out.
    await delay(80);
    const taking = gate();
    const takingRunning = gate();
    const taker = entries.withRenewal(lateKey, 10_000, async () => {
      takingRunning.open();
      await taking.opened;
      return 'taker';
    });
    await takingRunning.opened;
    // The late holder finishes and releases: the taker's lease must survive it.
    hung.open();
    await late;
    expect(await entries.withRenewal(lateKey, 10_000, async () => 'third')).toEqual({ held: false });
    taking.open();
    expect(await taker).toEqual({ held: true, value: 'taker' });
  });

  it('renews a token once for the fleet when two workers need it at the same time', async () => {
    if (!opened) throw new Error('store not open');
    const [workerA, workerB] = [new TokenCache(opened.store), new TokenCache(opened.store)];
    const fleetKey = { ...key, server: 'fleet' };
    await workerA.put(fleetKey, { accessToken: 'stale', expiresInSeconds: 3600 });
    await workerB.reject(fleetKey, 'stale');
    let requests = 0;
    const renewing = gate();
    const running = gate();
    const renew = async () => {
      requests += 1;
      running.open();
      await renewing.opened;
      return workerA.put(fleetKey, { accessToken: `renewed-${requests}`, expiresInSeconds: 3600 });
    };
    const first = workerA.renewOnce(fleetKey, renew);
    await running.opened;
    const second = workerB.renewOnce(fleetKey, renew);
    // A slow token endpoint: B finds the lease taken and polls (every 100 ms) for A's token meanwhile.
    await delay(250);
    renewing.open();
    const [a, b] = await Promise.all([first, second]);
    expect(requests).toBe(1);
    expect(a.accessToken).toBe('renewed-1');
    expect(b.accessToken).toBe('renewed-1');
  });
});
