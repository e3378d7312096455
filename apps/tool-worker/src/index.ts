export { createLogger } from './runtime/logger.ts';
export { ToolWorker, type ToolWorkerOptions } from './tool-worker.ts';
