export { type DispatcherOptions, ToolCallDispatcher } from './tool-call-dispatcher.ts';
export type { ToolCallRequest } from './tool-call-request.ts';
