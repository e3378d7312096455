import type { components } from './schema.ts';

type Schemas = components['schemas'];
type WireOutcome = Schemas['ToolCallOutcome'];
type WireJob = Schemas['Job'];

/** An outcome as the client returns it: `text` always there. */
export type ToolCallOutcome = WireOutcome & { text: string };
export type ToolCall = Omit<Schemas['ToolCall'], 'outcome'> & { outcome: ToolCallOutcome | null };
export type Job = Omit<WireJob, 'toolCalls'> & { toolCalls: ToolCall[] };

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

/** The job as the API sent it, each outcome's `text` filled in. */
export function withOutcomeTexts(job: WireJob): Job {
  // A body without calls (an older or a stand-in server) is passed on as it came, not failed on.
  if (!Array.isArray(job.toolCalls)) return job as Job;
  return {
    ...job,
    toolCalls: job.toolCalls.map((call) => ({
      ...call,
      outcome: call.outcome ? { ...call.outcome, text: outcomeText(call.outcome) } : null,
    })),
  };
}
