import type { components } from '@switchyard/client';

export type {
  Job,
  JobListQuery,
  JobRequest,
  JobSummary,
  Message,
  ModelChoices,
  PendingInput,
  Server,
  Tool,
  ToolCall,
  ToolCallAttempt,
  Viewer,
} from '@switchyard/client';
export { FINAL_JOB_STATUSES, SwitchyardApiError } from '@switchyard/client';

/** A running call's newest `tool_call.progress` event. */
export type CallProgress = components['schemas']['ToolCallProgressEvent'];

/** A tool's question as the console renders it (the document types it as an open object). */
export interface Question {
  mode: 'form' | 'url';
  message: string;
  requestedSchema?: JsonSchemaObject;
  url?: string;
}

export interface JsonSchemaObject {
  type?: string;
  properties?: Record<string, JsonSchemaProperty>;
  required?: string[];
}

export interface JsonSchemaProperty {
  type?: 'string' | 'number' | 'integer' | 'boolean' | 'object' | 'array';
  title?: string;
  description?: string;
  enum?: unknown[];
  default?: unknown;
}

/** A worker's session to a server, as an operator sees it. */
export interface Session {
  workerId: string;
  state: string;
  since: string;
  connects: number;
  lastError?: string;
  protocolVersion?: string;
}
