/**
 * The server is missing configuration a requested model needs (an API key, usually), or the job's team
 * may not use the provider. A distinct class so the HTTP layer can answer 400 with the message instead
 * of failing the run later.
 */
export class ModelConfigError extends Error {
  override readonly name = 'ModelConfigError';

  constructor(
    /** What to set: an environment variable (OPENAI_API_KEY) or a config key (teams.alpha.models.openai). */
    readonly setting: string,
    message: string,
  ) {
    super(message);
  }
}
