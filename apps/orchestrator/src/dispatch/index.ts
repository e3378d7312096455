export { ToolCallDispatcher, type DispatcherOptions, type ToolCallRequest } from './tool-call-dispatcher.ts';
export { OutcomeListener } from './outcome-listener.ts';
