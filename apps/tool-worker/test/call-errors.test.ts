import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { ZodError } from 'zod';
import { classifyCallError } from '../src/execution/call-errors.ts';
import { SessionNotReadyError } from '../src/sessions/managed-session.ts';

describe('call failure classification', () => {
  it.each([
    [new SessionNotReadyError('docs', 'reconnecting'), false, 'not_sent'],
    [new Error('Not connected'), false, 'not_sent'],
    [new McpError(ErrorCode.RequestTimeout, 'Request timed out'), false, 'timeout'],
    [new McpError(ErrorCode.RequestTimeout, 'aborted'), true, 'cancelled'],
    [new McpError(ErrorCode.ConnectionClosed, 'Connection closed'), false, 'transport'],
    [new McpError(ErrorCode.InvalidParams, 'bad'), false, 'invalid_params'],
    [new McpError(ErrorCode.MethodNotFound, 'nope'), false, 'unknown_tool'],
    [new McpError(ErrorCode.InternalError, 'boom'), false, 'protocol'],
    [new TypeError('fetch failed'), false, 'transport'],
    [
      new ZodError([{ code: 'custom', path: ['content'], message: 'expected array', input: 'nope' }]),
      false,
      'protocol',
    ],
  ])('%s (cancelled: %s) is %s', (error, cancelled, kind) => {
    expect(classifyCallError(error, cancelled).kind).toBe(kind);
  });
});
