import { z } from 'zod';

/** `POST /v1/jobs/:id/input`: the answer to the question one call asked. */
export const InputAnswerSchema = z.strictObject({
  /** The call that asked (as the job view and the `input_required` event name it). */
  toolCallId: z.string().min(1).max(200),
  action: z.enum(['accept', 'decline', 'cancel']),
  /** accept in form mode: the answer, validated against the question's requested schema. */
  content: z.record(z.string(), z.unknown()).optional(),
});
export type InputAnswer = z.infer<typeof InputAnswerSchema>;

/** `POST /v1/jobs/:id/approvals/:callId`: a decision bound to the digest of the arguments it saw. */
export const ApprovalDecisionSchema = z.strictObject({
  decision: z.enum(['approve', 'deny']),
  digest: z.string().regex(/^sha256:[0-9a-f]{64}$/, 'must be "sha256:" and 64 hex digits'),
  reason: z.string().max(1_000).optional(),
});
export type ApprovalDecisionBody = z.infer<typeof ApprovalDecisionSchema>;

export const CallIdSchema = z.string().min(1).max(200);
