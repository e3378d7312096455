import { describe, expect, it } from 'vitest';
import { capResult, textForModel } from '../src/execution/result-cap.ts';

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
