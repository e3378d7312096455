import { MODEL_PROVIDERS } from '@switchyard/contracts';
import { z } from 'zod';

/** The models a team's jobs may use (`GET /v1/models`): what the console's agent form offers. Never a key. */
export const ModelChoicesSchema = z
  .object({
    team: z.string(),
    /** The model of a job that names none, or null: such a job is then a 400. */
    default: z.object({ provider: z.enum(MODEL_PROVIDERS), name: z.string() }).nullable(),
    providers: z.array(
      z.object({
        provider: z.enum(MODEL_PROVIDERS),
        /** Whose key the provider is used with: the team's own, the deployment's, or none (scripted, ollama). */
        keys: z.enum(['team', 'deployment', 'none']),
      }),
    ),
  })
  .meta({
    id: 'ModelChoices',
    description:
      "The model providers this team's agent jobs may name (each usable now: it has its key), and the default model",
  });
export type ModelChoices = z.output<typeof ModelChoicesSchema>;
