import { OUTCOME_STATUSES, type OutcomeStatus } from '@switchyard/contracts';
import { describe, expect, it } from 'vitest';
import { localOutcome } from '../src/dispatch/local-outcome.ts';
import { headerMismatch } from '../src/gateway/mcp-headers.ts';
import { OUTCOME_META_KEY, toCallToolResult } from '../src/gateway/outcome-result.ts';

const call = {
  jobId: 'job-1',
  toolCallId: 'call-1',
  server: 'notes',
  tool: 'add_note',
  enqueuedAt: Date.now(),
};

/** docs/semantics.md §16: how each outcome reaches an MCP client of /mcp. */
describe('gateway outcome → MCP result', () => {
  it('passes an ok result through as the server sent it', () => {
    const outcome = {
      ...localOutcome(call, 'ok', ''),
      content: [{ type: 'text', text: 'n-1' }],
      structuredContent: { id: 'n-1' },
    };
    const result = toCallToolResult(outcome, 'job-1');
    expect(result).toMatchObject({
      content: [{ type: 'text', text: 'n-1' }],
      structuredContent: { id: 'n-1' },
    });
    expect(result.isError).toBeUndefined();
    expect(result._meta?.[OUTCOME_META_KEY]).toMatchObject({ status: 'ok', executed: 'yes', jobId: 'job-1' });
  });

  it("keeps a tool's own error result and marks it isError", () => {
    const outcome = {
      ...localOutcome(call, 'tool_error', ''),
      content: [{ type: 'text', text: 'Note not found' }],
    };
    expect(toCallToolResult(outcome, 'job-1')).toMatchObject({
      isError: true,
      content: [{ type: 'text', text: 'Note not found' }],
    });
  });

  const sentence = {
    yes: 'The tool ran.',
    no: 'The tool did not run.',
    unknown: 'The tool may or may not have run: check before retrying a write.',
  };
  const failures = OUTCOME_STATUSES.filter((status) => status !== 'ok' && status !== 'tool_error');
  it.each(failures)('turns %s into an isError text naming the status and whether the tool ran', (status) => {
    const outcome = localOutcome(call, status as OutcomeStatus, 'what happened.');
    const result = toCallToolResult(outcome, 'job-1');
    expect(result.isError).toBe(true);
    expect(result.content).toEqual([
      { type: 'text', text: `[${status}] what happened. ${sentence[outcome.executed]}` },
    ]);
    expect(result._meta?.[OUTCOME_META_KEY]).toMatchObject({ status, executed: outcome.executed });
  });
});

describe('Mcp-Method / Mcp-Name headers', () => {
  const body = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'notes__add_note' } };

  it('accepts headers that match the body, and no headers at all', () => {
    expect(headerMismatch({}, body)).toBeUndefined();
    expect(
      headerMismatch({ 'mcp-method': 'tools/call', 'mcp-name': 'notes__add_note' }, body),
    ).toBeUndefined();
  });

  it('names the header that contradicts the body', () => {
    expect(headerMismatch({ 'mcp-method': 'tools/list' }, body)).toMatch(/^Mcp-Method header "tools\/list"/);
    expect(headerMismatch({ 'mcp-name': 'search__search' }, body)).toMatch(
      /^Mcp-Name header "search__search"/,
    );
  });

  it('refuses the headers on a body that is not one message', () => {
    expect(headerMismatch({ 'mcp-method': 'tools/call' }, [body])).toMatch(/single JSON-RPC message/);
  });
});
