import type { CallWait } from '../../tool-calls/call-wait.ts';

/** What running one model turn's tool calls gave: every answer, or what some of them wait for. */
export type ToolsResult<T> =
  | { messages: T[]; waits?: undefined }
  | { waits: CallWait[]; messages?: undefined };
