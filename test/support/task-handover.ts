import type { ToolCallDispatcher } from '@switchyard/orchestrator/dispatch';
import { expect } from 'vitest';
import type { Fleet } from './fleet.ts';
import type { LogLine, TestProcess } from './processes.ts';

type Outcome = Awaited<ReturnType<ToolCallDispatcher['dispatch']>>;

/** The worker's log line for the task it created for the call `topic` (its tool call id). */
export function taskCreated(worker: TestProcess, topic: string): Promise<LogLine> {
  return worker.waitFor(
    (log) => log.msg === 'task created' && log.tool_call_id === topic,
    `task for ${topic}`,
    60_000,
  );
}

/**
 * Runs `call` with two workers consuming, and kills whichever created the task as soon as it has (the
 * other cannot take the job before the dead worker's lock expires). Asserts the survivor resumed that
 * same task and recorded the outcome; returns the outcome, the task id and the survivor.
 */
export async function killWhileTaskRuns(
  fleet: Fleet,
  [current, spare]: [TestProcess, TestProcess],
  topic: string,
  call: () => Promise<Outcome>,
): Promise<{ outcome: Outcome; taskId: string; survivor: TestProcess }> {
  const pending = call();
  const { owner, survivor, log } = await Promise.race([
    taskCreated(current, topic).then((log) => ({ owner: current, survivor: spare, log })),
    taskCreated(spare, topic).then((log) => ({ owner: spare, survivor: current, log })),
  ]);
  fleet.group.adopt(await owner.crash());
  const outcome = await pending;
  const taskId = log.task_id as string;
  const resumed = await survivor.waitFor(
    (line: LogLine) => line.msg === 'resuming task' && line.task_id === taskId,
    'resuming task',
  );
  expect(resumed.previousWorker).toBe(owner.name.replace('worker ', ''));
  expect(outcome.workerId).toBe(survivor.name.replace('worker ', ''));
  return { outcome, taskId, survivor };
}
