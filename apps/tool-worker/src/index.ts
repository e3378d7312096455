export { type TokenKey, tokenCacheStore } from './credentials/token-cache-store.ts';
export { createLogger } from './runtime/logger.ts';
export { ToolWorker, type ToolWorkerOptions } from './tool-worker.ts';
