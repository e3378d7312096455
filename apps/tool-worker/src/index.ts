export { ToolWorker, type ToolWorkerOptions } from './tool-worker.ts';
export { createLogger } from './runtime/logger.ts';
