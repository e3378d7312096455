import { describe, expect, it } from 'vitest';
import { ProblemException } from '../src/http/problem.ts';
import { encodeCursor, parseListQuery } from '../src/jobs/job-list-query.ts';
import { requestDigest } from '../src/jobs/request-digest.ts';

const problemOf = (query: Record<string, unknown>): ProblemException => {
  try {
    parseListQuery(query);
  } catch (error) {
    if (error instanceof ProblemException) return error;
    throw error;
  }
  throw new Error(`no problem for ${JSON.stringify(query)}`);
};

describe('the job list query', () => {
  it('reads statuses repeated or comma-separated, metadata in both spellings, and the default limit', () => {
    expect(
      parseListQuery({
        status: ['failed', 'succeeded,cancelled'],
        'metadata[team area]': 'ops',
        'metadata.ticket': 'OPS-1',
      }),
    ).toEqual({
      statuses: ['failed', 'succeeded', 'cancelled'],
      metadata: { 'team area': 'ops', ticket: 'OPS-1' },
      limit: 50,
    });
  });

  it('round-trips its own cursor and refuses any other', () => {
    const position = {
      createdAt: '2026-12-01 01:30:00.123456+00',
      id: 'job_0b7c6a52-6f2e-4d1a-9a51-1f1f6c2a9e10',
    };
    expect(parseListQuery({ cursor: encodeCursor(position), limit: '200' })).toMatchObject({
      after: position,
      limit: 200,
    });
    for (const cursor of ['', 'abc', Buffer.from('["x","y"]').toString('base64url')])
      expect(problemOf({ cursor }).kind).toBe('invalid-cursor');
  });

  it('names what is wrong: a limit out of range, an unknown parameter, a metadata key given twice', () => {
    expect(problemOf({ limit: '201' }).extensions.errors).toEqual([
      expect.objectContaining({ path: 'limit' }),
    ]);
    expect(problemOf({ order: 'asc' }).detail).toMatch(/unknown parameter\(s\): order/);
    expect(problemOf({ 'metadata.a': ['1', '2'] }).detail).toMatch(/metadata\.a/);
    expect(problemOf({ metadata: 'x' }).detail).toMatch(/metadata/);
  });
});

describe('the request digest', () => {
  it('ignores key order and undefined members, and tells different requests apart', () => {
    const a = { kind: 'batch', calls: [{ tool: 't', arguments: { x: 1, y: 2 } }], metadata: { a: '1' } };
    const b = {
      metadata: { a: '1' },
      calls: [{ arguments: { y: 2, x: 1 }, tool: 't' }],
      kind: 'batch',
      limits: undefined,
    };
    expect(requestDigest(a)).toBe(requestDigest(b));
    expect(requestDigest(a)).not.toBe(requestDigest({ ...a, metadata: { a: '2' } }));
    // Order within arrays is meaning: the calls run in that order.
    expect(requestDigest({ calls: [1, 2] })).not.toBe(requestDigest({ calls: [2, 1] }));
  });
});
