export { type DispatcherOptions, ToolCallDispatcher, type ToolCallRequest } from './tool-call-dispatcher.ts';
