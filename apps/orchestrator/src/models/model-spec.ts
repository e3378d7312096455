import { z } from 'zod';

/**
 * One scripted tool call. `tool` is only length-checked, not matched against the tool-name pattern:
 * a script may deliberately call a name the tools node must refuse.
 */
const ScriptedToolCallSchema = z.strictObject({
  tool: z.string().min(1).max(64),
  arguments: z.record(z.string(), z.unknown()).default({}),
  id: z.string().min(1).max(100).optional(),
});

/** The longest a scripted turn may wait before replying: a slow real model step, not a parked run. */
export const MAX_SCRIPT_DELAY_MS = 60_000;

/**
 * How long the turn waits before it replies, as a real model's latency would (benchmarks of runs that
 * mostly wait, cancel tests). Timer-based and abortable: a cancelled run does not sit out the delay.
 */
const delayMs = z.int().min(0).max(MAX_SCRIPT_DELAY_MS).optional();

/** One model turn of a script: either ask for tool calls or answer and stop. */
export const ScriptTurnSchema = z.union([
  z.strictObject({ toolCalls: z.array(ScriptedToolCallSchema).min(1).max(64), delayMs }),
  z.strictObject({ final: z.string().max(100_000), delayMs }),
]);
export type ScriptTurn = z.infer<typeof ScriptTurnSchema>;

const ScriptedModelSpecSchema = z.strictObject({
  provider: z.literal('scripted'),
  script: z.array(ScriptTurnSchema).min(1).max(200),
});

/** The knobs shared by the real providers; anything provider-specific stays out of the job request. */
const hostedModelFields = {
  name: z.string().min(1),
  temperature: z.number().min(0).max(2).optional(),
  maxTokens: z.int().min(1).max(200_000).optional(),
};

/** The `model` field of a job request, discriminated on `provider`; unknown keys are rejected. */
export const ModelSpecSchema = z.discriminatedUnion('provider', [
  ScriptedModelSpecSchema,
  z.strictObject({ provider: z.literal('openai'), ...hostedModelFields }),
  // Anthropic's API refuses temperatures above 1; say so at request time rather than mid-run.
  z.strictObject({
    provider: z.literal('anthropic'),
    ...hostedModelFields,
    temperature: z.number().min(0).max(1).optional(),
  }),
  z.strictObject({ provider: z.literal('ollama'), ...hostedModelFields }),
]);
export type ModelSpec = z.infer<typeof ModelSpecSchema>;

/** The providers that talk to a real model server, i.e. every provider but `scripted`. */
export type HostedModelProvider = Exclude<ModelSpec['provider'], 'scripted'>;
