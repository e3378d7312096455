import type { ToolCallJob, ToolCallLog } from '@switchyard/contracts';
import { describe, expect, it } from 'vitest';
import { boundedLog, callLogs, LOG_BURST, LOG_PER_SECOND } from '../src/execution/call-logs.ts';
import { SessionLogs } from '../src/sessions/session-logs.ts';

const call = { server: 'notes', tool: 'add_note' } as ToolCallJob;

/** A relay that records what it published, in order. */
function recording() {
  const published: Array<ToolCallLog['log']> = [];
  return {
    published,
    relay: async (_id: string, _call: ToolCallJob, log: ToolCallLog['log']) => void published.push(log),
  };
}

describe("a call's log messages on their way to its /mcp client", () => {
  it('relays only messages at or above the asked level, as the server sent them', async () => {
    const { published, relay } = recording();
    const logs = callLogs(relay, 'tc-1', call, 'warning');
    logs.onLog({ level: 'debug', data: 'd' });
    logs.onLog({ level: 'info', data: 'i' });
    logs.onLog({ level: 'warning', logger: 'db', data: { step: 1 } });
    logs.onLog({ level: 'emergency', data: 'e' });
    await logs.close();
    expect(published).toEqual([
      { level: 'warning', logger: 'db', data: { step: 1 } },
      { level: 'emergency', data: 'e' },
    ]);
  });

  it('keeps to its budget, drops the rest and says how many once the call ends', async () => {
    const { published, relay } = recording();
    let now = 0;
    const logs = callLogs(relay, 'tc-1', call, 'debug', () => now);
    for (let i = 0; i < LOG_BURST + 5; i += 1) logs.onLog({ level: 'info', data: i });
    now += 1_000; // a second later the budget has refilled by LOG_PER_SECOND
    for (let i = 0; i < LOG_PER_SECOND + 1; i += 1) logs.onLog({ level: 'info', data: `late ${i}` });
    await logs.close();
    expect(published).toHaveLength(LOG_BURST + LOG_PER_SECOND + 1);
    expect(published.at(-1)).toEqual({
      level: 'warning',
      logger: 'switchyard',
      data: `6 log message(s) of notes/add_note were not relayed: more than ${LOG_BURST} at once or ${LOG_PER_SECOND} a second`,
    });
  });

  it('publishes one message after another, so a slow publish is not overtaken', async () => {
    const started: unknown[] = [];
    const finished: unknown[] = [];
    const relay = async (_id: string, _call: ToolCallJob, log: ToolCallLog['log']) => {
      started.push(log.data);
      // The first publish is the slowest, as a NOTIFY on a busy pooled connection may be.
      await new Promise((resolve) => setTimeout(resolve, log.data === 1 ? 30 : 0));
      finished.push(log.data);
    };
    const logs = callLogs(relay, 'tc-1', call, 'debug');
    logs.onLog({ level: 'info', data: 1 });
    logs.onLog({ level: 'info', data: 2 });
    expect(started).toEqual([]); // nothing is sent synchronously; each waits for the one before
    await logs.close();
    expect(finished).toEqual([1, 2]);
  });

  it("cuts a server's long data and logger name", () => {
    const long = boundedLog({ level: 'info', logger: 'l'.repeat(500), data: { text: 'y'.repeat(9_000) } });
    expect(long.logger).toHaveLength(200);
    expect(typeof long.data).toBe('string');
    expect(String(long.data)).toMatch(/… \[cut: 9011 characters of JSON\]$/);
    expect(String(long.data).length).toBeLessThanOrEqual(4_000);
    expect(boundedLog({ level: 'info', data: undefined }).data).toBeNull();
  });
});

describe("a session's log messages", () => {
  it('go to the one call in flight, and to nobody while two are, whether or not the other wants logs', () => {
    const logs = new SessionLogs();
    const heard: unknown[] = [];
    const detach = logs.attach((message) => heard.push(message.data));
    expect(logs.deliver({ level: 'info', data: 'alone' })).toBe(true);
    const other = logs.attach(undefined); // a call (maybe another team's) that asked for no logs
    expect(logs.deliver({ level: 'info', data: 'whose?' })).toBe(false);
    other();
    detach();
    expect(logs.deliver({ level: 'info', data: 'nobody' })).toBe(false);
    expect(heard).toEqual(['alone']);
  });
});
