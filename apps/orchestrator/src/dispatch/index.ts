export { type LocalCall, localOutcome } from './local-outcome.ts';
export { OutcomeListener } from './outcome-listener.ts';
export { type DispatcherOptions, ToolCallDispatcher, type ToolCallRequest } from './tool-call-dispatcher.ts';
