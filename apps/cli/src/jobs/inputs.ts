import type { Job, PendingInput, SwitchyardClient } from '@switchyard/client';
import { UsageError } from '../usage-error.ts';
import { jsonObject } from './json-flag.ts';

/** `jobs answer`: the answer to the question a call waits for. */
export async function answerQuestion(
  client: SwitchyardClient,
  id: string,
  flags: { call: string; content?: string; decline?: boolean; cancel?: boolean },
): Promise<Job> {
  if (flags.decline && flags.cancel) throw new UsageError('give --decline or --cancel, not both');
  const action = flags.decline ? 'decline' : flags.cancel ? 'cancel' : 'accept';
  if (action !== 'accept' && flags.content)
    throw new UsageError(`--content goes with an accepted answer, not --${action}`);
  return client.answerInput(id, {
    toolCallId: flags.call,
    action,
    ...(flags.content ? { content: jsonObject('--content', flags.content) } : {}),
  });
}

/**
 * `jobs approve`: decides the approval a call waits for. The decision is bound to the digest of the
 * arguments: the one given with --digest (seen in `jobs get`), else the pending one, whose arguments
 * are printed with the decision so that what was approved is on record.
 */
export async function decideApproval(
  client: SwitchyardClient,
  id: string,
  callId: string,
  flags: { deny?: boolean; reason?: string; digest?: string },
): Promise<{ job: Job; approval: PendingInput }> {
  const pending = (await client.getJob(id)).pendingInputs?.find(
    (input) => input.kind === 'approval' && input.toolCallId === callId && input.state === 'pending',
  );
  if (!pending?.digest)
    throw new UsageError(
      `job ${id} has no call ${callId} waiting for approval (see: switchyard jobs get ${id})`,
    );
  const job = await client.decideApproval(id, callId, {
    decision: flags.deny ? 'deny' : 'approve',
    digest: flags.digest ?? pending.digest,
    ...(flags.reason ? { reason: flags.reason } : {}),
  });
  return { job, approval: pending };
}
