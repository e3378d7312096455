export { createSwitchyardClient, SwitchyardClient, type SwitchyardClientOptions } from './client.ts';
export { type ProblemKind, SwitchyardApiError, SwitchyardConnectionError } from './errors.ts';
export {
  type FollowOptions,
  isFinalEvent,
  type JobEvent,
  type KnownJobEvent,
  type OtherJobEvent,
} from './job-events.ts';
export { outcomeText, withOutcomeTexts } from './outcome-text.ts';
export type { components, operations, paths } from './schema.ts';
export * from './types.ts';
