import { z } from 'zod';

/** The providers that talk to a model server; `scripted` replays a job's own script and needs no key. */
export const HOSTED_MODEL_PROVIDERS = ['openai', 'anthropic', 'ollama'] as const;
export const MODEL_PROVIDERS = [...HOSTED_MODEL_PROVIDERS, 'scripted'] as const;

const HostedProviderSchema = z.enum(HOSTED_MODEL_PROVIDERS);
const ProviderSchema = z.enum(MODEL_PROVIDERS);

/**
 * A `${VAR}` left as written: the tool worker keeps the teams' secrets unexpanded (it never reads them),
 * so a base URL given as `${VAR}` must pass there; the orchestrator expands it and checks it as a URL.
 */
const UNEXPANDED = /\$\{[A-Za-z_][A-Za-z0-9_]*(?::-[^}]*)?\}/;

const BaseUrlSchema = z
  .string()
  .refine(
    (text) => UNEXPANDED.test(text) || (URL.canParse(text) && /^https?:$/.test(new URL(text).protocol)),
    { error: 'not an http(s) URL' },
  );

const ApiKeySchema = z.string().min(1, 'must not be empty (give it as "${VAR}")');

/**
 * `teams.<team>.models` (docs/configuration.md): the team's own model credentials. An entry is complete
 * on its own: nothing of the deployment's environment (OPENAI_API_KEY, OPENAI_BASE_URL, …) is mixed into it.
 */
export const TeamModelsSchema = z
  .strictObject({
    /** Any OpenAI-compatible endpoint: a key, or only `baseUrl` for a local server that needs none. */
    openai: z
      .strictObject({ apiKey: ApiKeySchema.optional(), baseUrl: BaseUrlSchema.optional() })
      .refine((entry) => entry.apiKey !== undefined || entry.baseUrl !== undefined, {
        path: ['apiKey'],
        error: 'required unless baseUrl names a local OpenAI-compatible server',
      })
      .optional(),
    anthropic: z.strictObject({ apiKey: ApiKeySchema, baseUrl: BaseUrlSchema.optional() }).optional(),
    /** Ollama takes no key; the entry lets the team use it, at its own server when given. */
    ollama: z.strictObject({ baseUrl: BaseUrlSchema.optional() }).optional(),
    /** The model of the team's jobs that name none (instead of SWITCHYARD_MODEL_PROVIDER / _NAME). */
    default: z
      .strictObject({
        provider: HostedProviderSchema,
        name: z.string().min(1),
        temperature: z.number().min(0).max(2).optional(),
        maxTokens: z.int().min(1).max(200_000).optional(),
      })
      .optional(),
    /**
     * The providers the team's jobs may name. Default: those with an entry above and `scripted` (and,
     * with useDeploymentKeys, every provider).
     */
    allow: z.array(ProviderSchema).min(1).optional(),
    /**
     * A provider without an entry above uses the deployment's key (OPENAI_API_KEY, …). Off by default:
     * a team with `models` spends only its own keys.
     */
    useDeploymentKeys: z.boolean().default(false),
  })
  .superRefine((models, ctx) => {
    const usable = (provider: z.output<typeof ProviderSchema>) =>
      provider === 'scripted' || models.useDeploymentKeys || models[provider] !== undefined;
    models.allow?.forEach((provider, index) => {
      if (!usable(provider))
        ctx.addIssue({
          code: 'custom',
          path: ['allow', index],
          message: `${provider} has no entry in this team's models and useDeploymentKeys is off`,
        });
    });
    const preset = models.default?.provider;
    if (preset === undefined) return;
    const refusal = !usable(preset)
      ? `${preset} has no entry in this team's models and useDeploymentKeys is off`
      : models.allow && !models.allow.includes(preset)
        ? `${preset} is not in this team's models.allow`
        : undefined;
    if (refusal) ctx.addIssue({ code: 'custom', path: ['default', 'provider'], message: refusal });
  });

export type TeamModels = z.output<typeof TeamModelsSchema>;
export type HostedModelProviderName = (typeof HOSTED_MODEL_PROVIDERS)[number];
export type ModelProviderName = (typeof MODEL_PROVIDERS)[number];
