import type { components } from './schema.ts';

type Schemas = components['schemas'];
type WireOutcome = Schemas['ToolCallOutcome'];
type WireJob = Schemas['Job'];

/** An outcome as the client returns it: `text` always there. */
export type ToolCallOutcome = WireOutcome & { text: string };
export type ToolCall = Omit<Schemas['ToolCall'], 'outcome'> & { outcome: ToolCallOutcome | null };
export type Message = Schemas['Message'] & { content: string };
export type Job = Omit<WireJob, 'toolCalls' | 'messages'> & { toolCalls: ToolCall[]; messages?: Message[] };

/**
 * What the model read of a result, as the orchestrator derives it (libs/contracts modelText): the
 * text blocks joined by newlines (other blocks named by type), else the structured content as JSON.
 * The API sends `text` only when the content does not yield it, so a result crosses the wire once.
 */
export function outcomeText(outcome: Pick<WireOutcome, 'text' | 'content' | 'structuredContent'>): string {
  if (outcome.text !== undefined) return outcome.text;
  const texts = (outcome.content ?? []).map((block) =>
    block.type === 'text' && typeof block.text === 'string' ? block.text : `[${block.type} content]`,
  );
  if (texts.length > 0) return texts.join('\n');
  if (outcome.structuredContent) return JSON.stringify(outcome.structuredContent);
  return '';
}

/**
 * A tool message's text as the model read it, worded as the orchestrator words it (libs/contracts
 * toolMessageText): the result's text when `ok`, else prefixed with the status.
 */
function toolMessageText(outcome: ToolCallOutcome): string {
  return outcome.status === 'ok' ? outcome.text : `[${outcome.status}] ${outcome.text}`;
}

/** The job as the API sent it, each outcome's `text` and each tool message's content filled in. */
export function withOutcomeTexts(job: WireJob): Job {
  // A body without calls (an older or a stand-in server) is passed on as it came, not failed on.
  if (!Array.isArray(job.toolCalls)) return job as Job;
  const toolCalls: ToolCall[] = job.toolCalls.map((call) => ({
    ...call,
    outcome: call.outcome ? { ...call.outcome, text: outcomeText(call.outcome) } : null,
  }));
  const told = new Map(
    toolCalls.flatMap((call) => (call.outcome ? [[call.id, toolMessageText(call.outcome)] as const] : [])),
  );
  const { messages: wireMessages, ...rest } = job;
  const messages = wireMessages?.map(
    (message): Message => ({
      ...message,
      content: message.content ?? (message.toolCallId ? told.get(message.toolCallId) : undefined) ?? '',
    }),
  );
  return { ...rest, toolCalls, ...(messages ? { messages } : {}) };
}
