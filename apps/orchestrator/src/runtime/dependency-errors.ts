/** The classifier lives with the store, which retries its own start-up on the same errors. */
export { DependencyTimeoutError, isDependencyOutage } from '@switchyard/contracts';
