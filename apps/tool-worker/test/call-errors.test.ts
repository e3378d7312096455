import { ProtocolError, ProtocolErrorCode, SdkError, SdkErrorCode } from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import { classifyCallError } from '../src/execution/call-errors.ts';
import { SessionNotReadyError } from '../src/sessions/managed-session.ts';

describe('call failure classification', () => {
  it.each([
    [new SessionNotReadyError('docs', 'reconnecting'), false, 'not_sent'],
    [new Error('Not connected'), false, 'not_sent'],
    [new SdkError(SdkErrorCode.NotConnected, 'Not connected'), false, 'not_sent'],
    [new SdkError(SdkErrorCode.RequestTimeout, 'Request timed out'), false, 'timeout'],
    [new SdkError(SdkErrorCode.RequestTimeout, 'aborted'), true, 'cancelled'],
    [new SdkError(SdkErrorCode.ConnectionClosed, 'Connection closed'), false, 'connection_lost'],
    [new SdkError(SdkErrorCode.ClientHttpFailedToOpenStream, 'stream lost'), false, 'transport'],
    [new ProtocolError(ProtocolErrorCode.InvalidParams, 'bad'), false, 'invalid_params'],
    [new ProtocolError(ProtocolErrorCode.MethodNotFound, 'nope'), false, 'unknown_tool'],
    [new ProtocolError(ProtocolErrorCode.InternalError, 'boom'), false, 'protocol'],
    [new ProtocolError(ProtocolErrorCode.InvalidRequest, 'requires task augmentation'), false, 'refused'],
    [new ProtocolError(ProtocolErrorCode.MissingRequiredClientCapability, 'tasks'), false, 'refused'],
    [new ProtocolError(ProtocolErrorCode.UnsupportedProtocolVersion, 'too old'), false, 'refused'],
    [new TypeError('fetch failed'), false, 'transport'],
    [
      new TypeError('fetch failed', {
        cause: Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' }),
      }),
      false,
      'connection_lost',
    ],
    [
      new TypeError('fetch failed', {
        cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }),
      }),
      false,
      'transport',
    ],
    [new SdkError(SdkErrorCode.InvalidResult, 'Invalid result for tools/call: content'), false, 'protocol'],
  ])('%s (cancelled: %s) is %s', (error, cancelled, kind) => {
    expect(classifyCallError(error, cancelled).kind).toBe(kind);
  });
});
