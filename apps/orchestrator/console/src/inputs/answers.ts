import { switchyard } from '../api/switchyard.ts';
import type { PendingInput } from '../api/types.ts';

export type AnswerAction = 'accept' | 'decline' | 'cancel';

/** `POST /v1/jobs/:id/input`: the answer to a tool's question (the API validates it against the schema). */
export function answerQuestion(
  jobId: string,
  toolCallId: string,
  action: AnswerAction,
  content?: Record<string, unknown>,
): Promise<unknown> {
  return switchyard().answerInput(jobId, { toolCallId, action, ...(content ? { content } : {}) });
}

/** `POST /v1/jobs/:id/approvals/:callId`, bound to the digest of the arguments the person saw. */
export function answerApproval(
  jobId: string,
  input: PendingInput,
  decision: 'approve' | 'deny',
): Promise<unknown> {
  if (!input.digest) throw new Error(`the approval of call ${input.toolCallId} names no digest`);
  return switchyard().decideApproval(jobId, input.toolCallId, { decision, digest: input.digest });
}
