export type {
  Job,
  JobListQuery,
  JobSummary,
  Message,
  PendingInput,
  Server,
  ToolCall,
} from '@switchyard/client';
export { FINAL_JOB_STATUSES, SwitchyardApiError } from '@switchyard/client';

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
  type?: 'string' | 'number' | 'integer' | 'boolean';
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
