import type { JobEvent, SwitchyardClient } from '@switchyard/client';
import { type ExitCode, exitCodeForStatus } from '../exit-codes.ts';
import type { Output } from '../output/output.ts';
import { progressLine } from './progress-line.ts';
import { jobHeadline } from './show.ts';

/**
 * `jobs watch`: the job's events as they happen (a line each, or JSON lines), across dropped
 * connections (the client resumes with Last-Event-ID), until the job ends or waits for input.
 * Exits with the code of how it ended.
 */
export async function watchJob(
  client: SwitchyardClient,
  id: string,
  output: Output,
  options: { lastEventId?: string } = {},
): Promise<ExitCode> {
  const events = client.followJob(id, {
    ...(options.lastEventId ? { lastEventId: options.lastEventId } : {}),
    onReconnect: ({ attempt, lastEventId, reason }) =>
      output.note(
        `connection lost (${reason}); resuming after event ${lastEventId ?? '(none)'} [attempt ${attempt}]`,
      ),
  });
  for await (const event of events) {
    output.line({ id: event.id, event: eventName(event), data: event.data }, () => progressLine(event));
    // Not final, but nothing more happens until someone answers: the watcher's part ends here, unless
    // this is a replayed wait that was answered since (the job has moved on).
    if (event.event === 'status' && event.data.status === 'input_required') {
      if ((await client.getJob(id)).status === 'input_required') break;
    }
  }
  const job = await client.getJob(id);
  if (!output.json) output.note(jobHeadline(job));
  return exitCodeForStatus(job.status);
}

function eventName(event: JobEvent): string {
  return event.event === 'other' ? event.name : event.event;
}
