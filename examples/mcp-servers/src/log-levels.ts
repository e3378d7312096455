/**
 * MCP's log levels, least severe first, for the example servers' logging tools (the examples stand
 * alone, without the Switchyard packages that define the same list).
 */
export const LOG_LEVELS = [
  'debug',
  'info',
  'notice',
  'warning',
  'error',
  'critical',
  'alert',
  'emergency',
] as const;
