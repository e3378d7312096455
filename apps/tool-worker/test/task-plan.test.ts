import { describe, expect, it } from 'vitest';
import { taskPlan } from '../src/execution/task-runner.ts';

/** servers.<name>.tasks.mode × a tool's execution.taskSupport (docs/configuration.md). */
describe('task plan', () => {
  it.each([
    ['auto', 'required', 'task'],
    ['auto', 'optional', 'call'],
    ['auto', 'forbidden', 'call'],
    ['auto', undefined, 'call'],
    ['prefer', 'required', 'task'],
    ['prefer', 'optional', 'task'],
    ['prefer', 'forbidden', 'call'],
    ['prefer', undefined, 'call'],
    ['never', 'required', 'refuse'],
    ['never', 'optional', 'call'],
    ['never', undefined, 'call'],
  ] as const)('mode %s, taskSupport %s → %s', (mode, support, plan) => {
    expect(taskPlan(mode, support, '2025-11-25')).toBe(plan);
  });

  it.each([
    ['2026-07-28', 'required', 'refuse'],
    ['2026-07-28', 'optional', 'call'],
    [undefined, 'required', 'refuse'],
  ] as const)('revision %s without a task mechanism here, taskSupport %s → %s', (revision, support, plan) => {
    expect(taskPlan('prefer', support, revision)).toBe(plan);
  });

  it.each([
    ['auto', 'call'],
    ['prefer', 'task'],
    ['never', 'call'],
  ] as const)(
    '2026-07-28 with the tasks extension, mode %s → %s (the server decides; a refusal for want of it is repeated as a task under auto)',
    (mode, plan) => {
      expect(taskPlan(mode, undefined, '2026-07-28', true)).toBe(plan);
    },
  );
});
