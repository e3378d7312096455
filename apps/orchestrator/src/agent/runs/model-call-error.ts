/** The model provider failed (after its own retries): the job fails with the provider's reason. */
export class ModelCallError extends Error {
  override name = 'ModelCallError';
}
