import { describe, expect, it } from 'vitest';
import { PrefixSchema, prefixFromEnv, toolCallJobId, toolQueueName, traceIdOf } from '../src/index.ts';

describe('naming', () => {
  it('gives every server queue its own Redis Cluster hash tag and no ":"', () => {
    expect(toolQueueName('docs')).toBe('tools.{docs}');
    expect(toolQueueName('docs')).not.toContain(':');
  });

  it('derives stable, distinct, BullMQ-safe tool-call job ids', () => {
    const id = toolCallJobId('job-1', 'call-1');
    expect(id).toBe(toolCallJobId('job-1', 'call-1'));
    expect(id).not.toBe(toolCallJobId('job-1', 'call-2'));
    // No ambiguity from concatenation: ("a", "bc") and ("ab", "c") differ.
    expect(toolCallJobId('a', 'bc')).not.toBe(toolCallJobId('ab', 'c'));
    expect(id).toMatch(/^tc-[0-9a-f]{40}$/);
  });

  it('refuses prefixes that would break key layout', () => {
    expect(PrefixSchema.safeParse('switchyard-prod').success).toBe(true);
    expect(PrefixSchema.safeParse('a:b').success).toBe(false);
    expect(PrefixSchema.safeParse('{a}').success).toBe(false);
    expect(prefixFromEnv({})).toBe('switchyard');
  });

  it('reads the trace id from a traceparent', () => {
    const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    expect(traceIdOf({ traceparent })).toBe('4bf92f3577b34da6a3ce929d0e0e4736');
    expect(traceIdOf({ traceparent: 'garbage' })).toBeUndefined();
    expect(traceIdOf(undefined)).toBeUndefined();
  });
});
