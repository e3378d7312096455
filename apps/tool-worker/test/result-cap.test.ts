import {
  buildOutcome,
  modelText,
  OUTCOME_ENVELOPE_BYTES,
  type ToolCallJob,
  ToolCallOutcomeSchema,
} from '@switchyard/contracts';
import { describe, expect, it } from 'vitest';
import { type CappedResult, capResult, jsonDepthExceeds } from '../src/execution/result-cap.ts';

const textForModel = (capped: CappedResult) => modelText(capped.content, capped.structuredContent);

describe('result size cap', () => {
  it('leaves results under the cap untouched', () => {
    const result = { content: [{ type: 'text', text: 'small' }], structuredContent: { a: 1 } };
    expect(capResult(result, 1024)).toEqual({ ...result, truncated: false });
  });

  it('cuts long text, keeps it valid UTF-8, and adds a marker', () => {
    const text = 'é'.repeat(10_000);
    const capped = capResult({ content: [{ type: 'text', text }] }, 2048);
    expect(capped.truncated).toBe(true);
    expect(Buffer.byteLength(JSON.stringify(capped.content))).toBeLessThanOrEqual(2048);
    expect(capped.content[0]?.text).not.toContain('\uFFFD');
    expect(capped.content.at(-1)).toMatchObject({
      type: 'text',
      text: expect.stringContaining('result truncated from'),
    });
  });

  it('drops oversized structured content and binary blocks rather than cutting them mid-value', () => {
    const capped = capResult(
      {
        content: [{ type: 'image', data: 'x'.repeat(5000), mimeType: 'image/png' }],
        structuredContent: { blob: 'y'.repeat(5000) },
      },
      2048,
    );
    expect(capped.structuredContent).toBeUndefined();
    expect(capped.content.map((block) => block.type)).toEqual(['text']);
    expect(textForModel(capped)).toContain('structuredContent dropped');
  });
});

describe('text for the model', () => {
  it('prefers text blocks, then structured content, and describes other blocks', () => {
    expect(
      textForModel({ content: [{ type: 'text', text: 'a' }, { type: 'image' }], truncated: false }),
    ).toBe('a\n[image content]');
    expect(textForModel({ content: [], structuredContent: { x: 1 }, truncated: false })).toBe('{"x":1}');
  });
});

describe('the cap is on the stored JSON, not the raw text', () => {
  it.each([
    ['quotes', '"'.repeat(200_000)],
    ['newlines', '\n'.repeat(200_000)],
    ['control characters', '\u0001'.repeat(200_000)],
    ['emoji', '😀'.repeat(100_000)],
  ])('keeps %s under the cap', (_what, text) => {
    const capped = capResult({ content: [{ type: 'text', text }] }, 64 * 1024);
    expect(capped.truncated).toBe(true);
    expect(Buffer.byteLength(JSON.stringify(capped.content))).toBeLessThanOrEqual(64 * 1024);
    expect(capped.content[0]?.text).not.toMatch(/[\ud800-\udbff]$/);
  });
});

const CALL: ToolCallJob = {
  jobId: 'j'.repeat(200),
  toolCallId: 'c'.repeat(200),
  server: 'hostile',
  tool: 't'.repeat(256),
  arguments: {},
  deadline: Date.now() + 1000,
  enqueuedAt: Date.now(),
  idempotent: false,
  trace: { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' },
  labels: {},
};

/** The worker's stored form of an ok result: what lands in Redis (job return value, stream) and PostgreSQL. */
function storedJson(capped: CappedResult): string {
  return JSON.stringify(
    buildOutcome(CALL, {
      workerId: 'worker-'.repeat(20),
      pickedUpAt: Date.now(),
      sentAt: Date.now(),
      status: 'ok',
      attempts: 1,
      content: capped.content,
      ...(capped.structuredContent ? { structuredContent: capped.structuredContent } : {}),
      truncated: capped.truncated,
    }),
  );
}

describe('the cap covers the whole stored outcome (issue 8 item 4)', () => {
  const maxBytes = 256 * 1024;

  it.each([
    [
      'a 9 MB _meta on a small text block',
      { content: [{ type: 'text', text: 'small', _meta: { blob: 'm'.repeat(9 * 1024 * 1024) } }] },
      /_meta and annotations of 1 block\(s\) dropped/,
    ],
    [
      'huge annotations on an image block',
      {
        content: [
          { type: 'text', text: 'caption' },
          {
            type: 'image',
            data: 'AAAA',
            mimeType: 'image/png',
            annotations: { audience: ['a'.repeat(4_000_000)] },
          },
        ],
      },
      /1 block\(s\) dropped \(image×1\)/,
    ],
    [
      'huge structuredContent',
      {
        content: [{ type: 'text', text: 'see structured' }],
        structuredContent: { rows: 'r'.repeat(3_000_000) },
      },
      /structuredContent dropped \(\d+ bytes\)/,
    ],
    [
      'many small blocks',
      {
        content: Array.from({ length: 100_000 }, (_, index) => ({
          type: 'resource_link',
          uri: `file:///${index}`,
          name: `n${index}`,
        })),
      },
      /block\(s\) dropped \(resource_link×\d+\)/,
    ],
  ])('%s: stored outcome ≤ maxResultBytes + envelope, marker says what was cut', (_what, result, said) => {
    const capped = capResult(result, maxBytes);
    const json = storedJson(capped);
    expect(Buffer.byteLength(json)).toBeLessThanOrEqual(maxBytes + OUTCOME_ENVELOPE_BYTES);
    expect(capped.truncated).toBe(true);
    const marker = capped.content.at(-1)?.text;
    expect(marker).toMatch(/^\[switchyard: result truncated from \d+ to at most 262144 bytes: /);
    expect(marker).toMatch(said);
    // The model's text is derived from the stored content: present after parsing, stored once.
    const parsed = ToolCallOutcomeSchema.parse(JSON.parse(json));
    expect(parsed.text).toContain('[switchyard: result truncated');
    expect(JSON.parse(json)).not.toHaveProperty('text');
  });

  it('stores a text result once: content only, text derived when read', () => {
    const text = 'x'.repeat(200 * 1024);
    const capped = capResult({ content: [{ type: 'text', text }] }, maxBytes);
    // Even when handed the model's text, the stored form drops it: the content already says it.
    const json = JSON.stringify(
      buildOutcome(CALL, {
        workerId: 'w',
        status: 'ok',
        attempts: 1,
        text: modelText(capped.content),
        content: capped.content,
        truncated: capped.truncated,
      }),
    );
    expect(JSON.parse(json)).not.toHaveProperty('text');
    expect(Buffer.byteLength(json)).toBeLessThan(text.length + 2048);
    expect(ToolCallOutcomeSchema.parse(JSON.parse(json)).text).toBe(text);
  });

  it('keeps the text of a failure, which the content cannot give', () => {
    const outcome = buildOutcome(CALL, {
      workerId: 'w',
      status: 'failed',
      attempts: 1,
      text: 'The call failed: boom',
      error: 'boom',
    });
    expect(ToolCallOutcomeSchema.parse(outcome).text).toBe('The call failed: boom');
  });
});

describe('result depth', () => {
  it('finds nesting past the limit without recursion', () => {
    let deep: Record<string, unknown> = { leaf: true };
    for (let level = 0; level < 5_000; level++) deep = { next: deep };
    expect(jsonDepthExceeds(deep, 256)).toBe(true);
    expect(jsonDepthExceeds({ a: [{ b: 1 }] }, 256)).toBe(false);
  });
});
