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

/** Room kept for the marker block; its text is bounded (counts and at most MARKER_TYPES type names). */
const MARKER_RESERVE = 768;
const MARKER_TYPES = 5;

const bytes = (value: unknown): number => Buffer.byteLength(JSON.stringify(value) ?? '', 'utf8');

/** What the cap removed, for the marker. */
class Cuts {
  textCut: { block: number; from: number; to: number } | undefined;
  strippedMeta = 0;
  readonly dropped = new Map<string, number>();
  structuredDropped = 0;

  drop(block: ContentBlock): void {
    const type = String(block.type).slice(0, 32);
    this.dropped.set(type, (this.dropped.get(type) ?? 0) + 1);
  }

  describe(original: number, maxBytes: number): string {
    const parts: string[] = [];
    if (this.textCut) {
      parts.push(
        `text of block ${this.textCut.block} cut from ${this.textCut.from} to ${this.textCut.to} bytes`,
      );
    }
    if (this.strippedMeta > 0) parts.push(`_meta and annotations of ${this.strippedMeta} block(s) dropped`);
    const droppedCount = [...this.dropped.values()].reduce((sum, count) => sum + count, 0);
    if (droppedCount > 0) {
      const types = [...this.dropped].sort((a, b) => b[1] - a[1]);
      const listed = types.slice(0, MARKER_TYPES).map(([type, count]) => `${type}×${count}`);
      if (types.length > MARKER_TYPES) listed.push(`${types.length - MARKER_TYPES} more types`);
      parts.push(`${droppedCount} block(s) dropped (${listed.join(', ')})`);
    }
    if (this.structuredDropped > 0) parts.push(`structuredContent dropped (${this.structuredDropped} bytes)`);
    return `[switchyard: result truncated from ${original} to at most ${maxBytes} bytes: ${parts.join('; ')}]`;
  }
}

/**
 * Cuts a tool result to `maxBytes` of JSON so one huge result cannot blow up Redis, Postgres or the
 * model's context. Everything a block carries counts (text, data, `_meta`, annotations), and so does
 * `structuredContent`. Text is shortened (a text block too big with its `_meta`/annotations keeps its
 * text and loses those), other blocks are dropped, and a marker block says what was cut.
 */
export function capResult(result: ToolResultBody, maxBytes: number): CappedResult {
  const content = result.content ?? [];
  const structured = result.structuredContent;
  const original = bytes(content) + (structured ? bytes(structured) : 0);
  if (original <= maxBytes) {
    return { content, ...(structured ? { structuredContent: structured } : {}), truncated: false };
  }
  const cuts = new Cuts();
  // The array brackets and the marker block's own comma and fields.
  let budget = maxBytes - MARKER_RESERVE - 2;
  const structuredSize = structured ? bytes(structured) : 0;
  const keptStructured = structured && structuredSize <= budget / 2 ? structured : undefined;
  if (keptStructured) budget -= structuredSize;
  else if (structured) cuts.structuredDropped = structuredSize;

  const kept: ContentBlock[] = [];
  for (const [index, block] of content.entries()) {
    // +1: the comma before the next element.
    const size = bytes(block) + 1;
    if (size <= budget) {
      kept.push(block);
      budget -= size;
      continue;
    }
    if (block.type === 'text' && typeof block.text === 'string' && !cuts.textCut && budget > 32) {
      const { text, ...rest } = block;
      let shell: ContentBlock = { ...rest, text: '' };
      if (bytes(shell) + 1 > budget / 2) {
        shell = { type: 'text', text: '' };
        cuts.strippedMeta += 1;
      }
      const room = budget - bytes(shell) - 1;
      const cut = cutToEncodedBytes(text, room);
      kept.push({ ...shell, text: cut });
      budget -= bytes(shell) + 1 + bytes(cut) - 2;
      if (cut.length < text.length) {
        cuts.textCut = { block: index, from: bytes(text) - 2, to: bytes(cut) - 2 };
      }
      continue;
    }
    cuts.drop(block);
  }
  kept.push({ type: 'text', text: cuts.describe(original, maxBytes) });
  return { content: kept, ...(keptStructured ? { structuredContent: keptStructured } : {}), truncated: true };
}

/**
 * The longest prefix of `text` whose JSON encoding fits `maxBytes`: the cap is on the stored JSON,
 * where a quote or newline costs 2 bytes and a control character 6. A surrogate pair cut in half at
 * the end is dropped.
 */
export function cutToEncodedBytes(text: string, maxBytes: number): string {
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

/** Whether a JSON value nests deeper than `max` levels; iterative, so a hostile depth cannot overflow it. */
export function jsonDepthExceeds(value: unknown, max: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length > 0) {
    const [item, depth] = stack.pop() as [unknown, number];
    if (item === null || typeof item !== 'object') continue;
    if (depth >= max) return true;
    for (const child of Array.isArray(item) ? item : Object.values(item)) stack.push([child, depth + 1]);
  }
  return false;
}
