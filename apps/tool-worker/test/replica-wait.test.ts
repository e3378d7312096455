import { ConfigError, type PostgresStore, ServerConfigSchema } from '@switchyard/contracts';
import { describe, expect, it } from 'vitest';
import { decideFailure } from '../src/execution/outcome-mapping.ts';
import { connectedReplicas, replicasToWaitFor, replicaWaitFor } from '../src/execution/replica-wait.ts';
import type { Logger } from '../src/runtime/logger.ts';

describe('the replicas a non-idempotent call waits for', () => {
  it('is the setting when it names a count, 0 being off', () => {
    expect(replicasToWaitFor(0, 2, [2])).toBe(0);
    expect(replicasToWaitFor(2, 0, [0])).toBe(2);
  });

  it('is, for auto, every replica the primary reports connected, and none when it has none', () => {
    expect(replicasToWaitFor('auto', 2, [2, 1])).toBe(2);
    expect(replicasToWaitFor('auto', 0, [0, 1])).toBe(0);
  });

  it('is at least one for a primary not seen yet, unless every primary seen has none', () => {
    expect(replicasToWaitFor('auto', undefined, [])).toBe(1);
    expect(replicasToWaitFor('auto', undefined, [0, 2])).toBe(1);
    expect(replicasToWaitFor('auto', undefined, [0, 0])).toBe(0);
  });

  it('counts the online replicas of a primary from INFO replication, nothing from a replica', () => {
    const info = [
      '# Replication',
      'role:master',
      'connected_slaves:3',
      'slave0:ip=127.0.0.1,port=7001,state=online,offset=42,lag=0',
      'slave1:ip=127.0.0.1,port=7002,state=wait_bgsave,offset=0,lag=0',
      'slave2:ip=127.0.0.1,port=7003,state=online,offset=42,lag=1',
      'master_repl_offset:42',
    ].join('\r\n');
    expect(connectedReplicas(info)).toBe(2);
    expect(connectedReplicas('# Replication\r\nrole:master\r\nconnected_slaves:0\r\n')).toBe(0);
    expect(connectedReplicas('# Replication\r\nrole:slave\r\nmaster_host:127.0.0.1\r\n')).toBeUndefined();
  });
});

describe('a marker the replicas did not confirm', () => {
  it('ends the call unavailable, not run, naming the reason; the attempt is not counted', () => {
    const decision = decideFailure(
      {
        kind: 'unreplicated',
        message: '0 of 1 Redis replica(s) confirmed the at-most-once marker within 500 ms',
      },
      {
        server: 'notes',
        tool: 'add_note',
        config: ServerConfigSchema.parse({ transport: 'stdio', command: 'node' }),
        idempotent: false,
        previousAttempts: 0,
        lastAttempt: false,
        sent: false,
        taskCreated: false,
        timeout: { timeoutMs: 3_000, basis: 'static', samples: 0 },
        detail: '',
      },
    );
    expect(decision).toMatchObject({
      kind: 'outcome',
      hold: true,
      facts: {
        status: 'unavailable',
        executed: 'no',
        attempts: 0,
        error: expect.stringMatching(/^replica_wait: 0 of 1/),
      },
    });
    if (decision.kind !== 'outcome') throw new Error('not an outcome');
    expect(decision.facts.text).toMatch(/notes\/add_note was not sent: Redis replicas did not confirm/);
  });
});

describe('the replica wait on the postgres backend', () => {
  // Never queried: the postgres side builds nothing (no standby to wait for is supported yet).
  const store = { kind: 'postgres' } as PostgresStore;
  const log = {} as Logger;

  it('waits for nobody on auto or 0', async () => {
    for (const replicas of ['auto', 0] as const) {
      const wait = replicaWaitFor(store, { replicas, timeoutMs: 1_000 }, 30_000, 2_000, log);
      expect(wait.disabled).toBe(true);
      expect(await wait.required(undefined)).toBe(0);
      wait.start();
      wait.stop();
    }
  });

  it('refuses a required count at start-up, naming the setting and what to use instead', () => {
    const start = () => replicaWaitFor(store, { replicas: 2, timeoutMs: 1_000 }, 30_000, 2_000, log);
    expect(start).toThrow(ConfigError);
    expect(start).toThrow(
      /worker\.replicaWait: .*not supported on the postgres backend.*synchronous standby/,
    );
  });
});
