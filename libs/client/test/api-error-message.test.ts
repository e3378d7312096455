import { describe, expect, it } from 'vitest';
import { SwitchyardApiError } from '../src/index.ts';

const problem = (detail: string, errors?: { path: string; message: string }[]) => ({
  type: 'urn:switchyard:problem:validation-failed' as const,
  title: 'The request is invalid',
  status: 400,
  detail,
  instance: '/v1/jobs',
  ...(errors ? { errors } : {}),
});

describe('the message of an API refusal', () => {
  it('says each offending field once when the detail names it already', () => {
    const idError = new SwitchyardApiError(
      'GET /v1/jobs/not-a-job',
      400,
      problem('invalid job id: (root): not a job id', [{ path: '(root)', message: 'not a job id' }]),
    );
    expect(idError.message).toBe(
      'GET /v1/jobs/not-a-job: 400 The request is invalid: invalid job id: (root): not a job id',
    );
    const modelError = new SwitchyardApiError(
      'POST /v1/jobs',
      400,
      problem('model: provider "anthropic" needs ANTHROPIC_API_KEY', [
        { path: 'model', message: 'provider "anthropic" needs ANTHROPIC_API_KEY' },
      ]),
    );
    expect(modelError.message).toBe(
      'POST /v1/jobs: 400 The request is invalid: model: provider "anthropic" needs ANTHROPIC_API_KEY',
    );
  });

  it('adds the fields the detail does not name', () => {
    const error = new SwitchyardApiError(
      'POST /v1/jobs',
      400,
      problem('invalid job request: calls.0.tool: required', [
        { path: 'calls.0.tool', message: 'required' },
        { path: 'limits.deadlineMs', message: 'too large' },
      ]),
    );
    expect(error.message).toBe(
      'POST /v1/jobs: 400 The request is invalid: invalid job request: calls.0.tool: required (limits.deadlineMs: too large)',
    );
  });
});
