export { createChatModel, type ToolCallingChatModel } from './create-chat-model.ts';
export { ModelConfigError } from './model-config-error.ts';
export { defaultModelSpecFromEnv, type ModelSettings, modelSettings } from './model-settings.ts';
export {
  type HostedModelProvider,
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
