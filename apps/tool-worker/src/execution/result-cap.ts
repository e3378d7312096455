type ContentBlock = { type: string; [key: string]: unknown };

/** The parts of an MCP CallToolResult that travel back to the model. */
export interface ToolResultBody {
  content?: ContentBlock[];
  structuredContent?: Record<string, unknown>;
}

export interface CappedResult {
  content: ContentBlock[];
  structuredContent?: Record<string, unknown>;
  truncated: boolean;
}

const bytes = (value: unknown): number => Buffer.byteLength(JSON.stringify(value) ?? '', 'utf8');

/**
 * Cuts a tool result to `maxBytes` of JSON so one huge result cannot blow up Redis, Postgres or the
 * model's context. Text is shortened, other blocks are dropped, and a marker block says so.
 */
export function capResult(result: ToolResultBody, maxBytes: number): CappedResult {
  const content = result.content ?? [];
  const structured = result.structuredContent;
  const original = bytes(content) + (structured ? bytes(structured) : 0);
  if (original <= maxBytes) {
    return { content, ...(structured ? { structuredContent: structured } : {}), truncated: false };
  }
  let budget = maxBytes - 256;
  const keptStructured = structured && bytes(structured) <= budget / 2 ? structured : undefined;
  if (keptStructured) budget -= bytes(keptStructured);
  const kept: CappedResult['content'] = [];
  for (const block of content) {
    if (budget <= 0) break;
    const size = bytes(block);
    if (size <= budget) {
      kept.push(block);
      budget -= size;
    } else if (block.type === 'text' && typeof block.text === 'string') {
      const { text: _whole, ...rest } = block;
      kept.push({ ...rest, text: cutToEncodedBytes(block.text, budget - bytes({ ...rest, text: '' })) });
      budget = 0;
    }
  }
  kept.push({
    type: 'text',
    text: `[switchyard: result truncated from ${original} to at most ${maxBytes} bytes${structured && !keptStructured ? '; structuredContent dropped' : ''}]`,
  });
  return { content: kept, ...(keptStructured ? { structuredContent: keptStructured } : {}), truncated: true };
}

/**
 * The longest prefix of `text` whose JSON encoding fits `maxBytes`: the cap is on the stored JSON,
 * where a quote or newline costs 2 bytes and a control character 6. A surrogate pair cut in half at
 * the end is dropped.
 */
function cutToEncodedBytes(text: string, maxBytes: number): string {
  let low = 0;
  // Every character encodes to at least one byte, so no prefix longer than maxBytes can fit.
  let high = Math.min(text.length, Math.max(0, maxBytes));
  while (low < high) {
    const middle = Math.ceil((low + high) / 2);
    if (bytes(text.slice(0, middle)) <= maxBytes) low = middle;
    else high = middle - 1;
  }
  return text.slice(0, low).replace(/[\ud800-\udbff]$/, '');
}

/** What the model reads: the text blocks, else the structured content, else a description. */
export function textForModel(result: CappedResult): string {
  const texts = result.content.flatMap((block) =>
    block.type === 'text' && typeof block.text === 'string' ? [block.text] : [`[${block.type} content]`],
  );
  if (texts.length > 0) return texts.join('\n');
  if (result.structuredContent) return JSON.stringify(result.structuredContent);
  return '';
}
