import { z } from 'zod';

/**
 * A question a tool asked a person mid-call (MCP elicitation): a form to fill in against a requested
 * JSON Schema, or a URL to visit. It travels in an `input_required` outcome, the job view and an SSE
 * event, so it is bounded like other outcome detail (docs/semantics.md §14).
 */
export const QuestionSchema = z.object({
  mode: z.enum(['form', 'url']),
  message: z.string().max(4_000),
  /** Form mode: the flat JSON Schema (object of primitive properties) the answer must match. */
  requestedSchema: z.record(z.string(), z.unknown()).optional(),
  /** URL mode: where the person goes. */
  url: z.string().max(4_000).optional(),
  /** URL mode: the server's id of this elicitation. */
  elicitationId: z.string().max(500).optional(),
});
export type Question = z.infer<typeof QuestionSchema>;

/** A requested schema larger than this (JSON) is not a form a person fills in; the question is refused. */
export const MAX_REQUESTED_SCHEMA_BYTES = 8 * 1024;

/** How a person answered: MCP's elicitation result. */
export const AnswerSchema = z.object({
  action: z.enum(['accept', 'decline', 'cancel']),
  content: z.record(z.string(), z.unknown()).optional(),
});
export type Answer = z.infer<typeof AnswerSchema>;

/** Cuts a server's question to the stored bounds; undefined when it cannot be kept (schema too large). */
export function boundedQuestion(question: Question): Question | undefined {
  if (
    question.requestedSchema &&
    JSON.stringify(question.requestedSchema).length > MAX_REQUESTED_SCHEMA_BYTES
  ) {
    return undefined;
  }
  return {
    ...question,
    message: question.message.slice(0, 4_000),
    ...(question.url ? { url: question.url.slice(0, 4_000) } : {}),
  };
}

type Properties = Record<string, { default?: unknown } | undefined>;

function propertiesOf(requestedSchema: Record<string, unknown> | undefined): Properties {
  const properties = requestedSchema?.properties;
  return properties && typeof properties === 'object' && !Array.isArray(properties)
    ? (properties as Properties)
    : {};
}

/**
 * An accepted form answer with the requested schema's defaults filled in for the fields it leaves out
 * (SEP-1034: the client applies a field's `default` when the answer omits it). What the answer gives is
 * kept as it is.
 */
export function withRequestedDefaults(
  requestedSchema: Record<string, unknown> | undefined,
  content: Record<string, unknown>,
): Record<string, unknown> {
  const filled = { ...content };
  for (const [name, property] of Object.entries(propertiesOf(requestedSchema))) {
    if (!(name in filled) && property && 'default' in property) filled[name] = property.default;
  }
  return filled;
}

/**
 * The answer made of the requested schema's defaults alone, when every field has one; undefined when
 * some field has none (a person must fill it in) or the form has no fields at all.
 */
export function answerFromDefaults(
  requestedSchema: Record<string, unknown> | undefined,
): Record<string, unknown> | undefined {
  const properties = Object.entries(propertiesOf(requestedSchema));
  if (properties.length === 0 || !properties.every(([, property]) => property && 'default' in property)) {
    return undefined;
  }
  return withRequestedDefaults(requestedSchema, {});
}
