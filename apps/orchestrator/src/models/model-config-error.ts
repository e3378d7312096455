/**
 * The server is missing configuration a requested model needs (an API key, usually). A distinct
 * class so the HTTP layer can answer 400 with the message instead of failing the run later.
 */
export class ModelConfigError extends Error {
  override readonly name = 'ModelConfigError';

  constructor(
    /** The environment variable to set. */
    readonly variable: string,
    message: string,
  ) {
    super(message);
  }
}
