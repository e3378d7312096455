import type { CallToolResult } from '@modelcontextprotocol/server';
import type { Executed, ToolCallOutcome } from '@switchyard/contracts';

/** `_meta` key of every gateway result: the Switchyard outcome behind it, for clients that read it. */
export const OUTCOME_META_KEY = 'io.switchyard/outcome';

const WHETHER_IT_RAN: Record<Executed, string> = {
  yes: 'The tool ran.',
  no: 'The tool did not run.',
  unknown: 'The tool may or may not have run: check before retrying a write.',
};

/** The sentence every gateway answer ends with: whether the tool ran, as `executed` says. */
export function whetherItRan(executed: Executed): string {
  return WHETHER_IT_RAN[executed];
}

/**
 * A Switchyard outcome as the MCP result the client receives (docs/semantics.md, gateway): `ok` is the
 * server's result as it sent it; `tool_error` is the server's own isError result; every other status
 * is an isError result whose text says what happened and whether the tool ran, so an MCP client (or
 * its model) can tell a call that never ran from one that may have.
 */
export function toCallToolResult(outcome: ToolCallOutcome, jobId: string): CallToolResult {
  const meta = {
    [OUTCOME_META_KEY]: {
      status: outcome.status,
      executed: outcome.executed,
      attempts: outcome.attempts,
      jobId,
      ...(outcome.traceId ? { traceId: outcome.traceId } : {}),
      ...(outcome.truncated ? { truncated: true } : {}),
    },
  };
  const structured = outcome.structuredContent ? { structuredContent: outcome.structuredContent } : {};
  if (outcome.status === 'ok') {
    return { content: outcome.content as CallToolResult['content'], ...structured, _meta: meta };
  }
  if (outcome.status === 'tool_error') {
    return {
      content: outcome.content as CallToolResult['content'],
      ...structured,
      isError: true,
      _meta: meta,
    };
  }
  return {
    content: [
      { type: 'text', text: `[${outcome.status}] ${outcome.text} ${WHETHER_IT_RAN[outcome.executed]}` },
    ],
    isError: true,
    _meta: meta,
  };
}

/** An isError result that says what happened without an outcome behind it. */
export function notice(status: string, text: string): CallToolResult {
  return { content: [{ type: 'text', text: `[${status}] ${text}` }], isError: true };
}

/** A job that ended (a cancel) before its call's outcome was written: nobody can say whether it ran. */
export function endedWithoutOutcome(jobId: string, status: string): CallToolResult {
  return notice(
    status,
    `job ${jobId} ended before its call's outcome was recorded. The tool may or may not have run: check before retrying a write.`,
  );
}
