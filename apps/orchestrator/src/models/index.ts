export { createChatModel, type ToolCallingChatModel } from './create-chat-model.ts';
export { defaultModelSpecFromEnv, deploymentModelAccess } from './deployment-model-access.ts';
export type { KeySource, ModelAccess, ProviderEndpoint } from './model-access.ts';
export { ModelConfigError } from './model-config-error.ts';
export { type ModelSettings, modelSettings, settingsSecret } from './model-settings.ts';
export {
  type HostedModelProvider,
  MAX_SCRIPT_DELAY_MS,
  type ModelSpec,
  ModelSpecSchema,
  type ScriptTurn,
  ScriptTurnSchema,
} from './model-spec.ts';
export {
  SCRIPT_EXHAUSTED_PREFIX,
  ScriptedChatModel,
  type ScriptedChatModelFields,
} from './scripted-chat-model.ts';
export { scrubSecret } from './secret-scrub.ts';
export { TeamModelsRegistry } from './team-models-registry.ts';
