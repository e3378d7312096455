import { z } from 'zod';

/**
 * One outcome notice (OutcomeNotices, store/outcome-notices.ts: an entry of the Redis stream
 * `redisKeys.outcomes`, or a row of PostgreSQL's `outcome_notice`): a worker announces that a tool-call
 * job settled, with its stored outcome as JSON, or with BullMQ's reason when the job failed for good.
 * Orchestrators read it to wake the call's waiter; the job itself stays the record.
 */
export const OutcomeNoticeSchema = z
  .object({
    /** The BullMQ queue name, `tools.{<server>}`. */
    queue: z.string().min(1),
    /** The BullMQ job id, deterministic per (job, call). */
    id: z.string().min(1),
    outcome: z.string().optional(),
    failedReason: z.string().optional(),
  })
  .refine((notice) => (notice.outcome === undefined) !== (notice.failedReason === undefined), {
    message: 'an outcome notice carries exactly one of outcome and failedReason',
  });
export type OutcomeNotice = z.infer<typeof OutcomeNoticeSchema>;

/** The XADD field list of a notice: `queue`, `id`, then `outcome` or `failedReason`. */
export function outcomeNoticeFields(notice: OutcomeNotice): string[] {
  return Object.entries(OutcomeNoticeSchema.parse(notice)).flatMap(([field, value]) =>
    value === undefined ? [] : [field, value],
  );
}

/** Reads an XREAD entry's flat field list; undefined for an entry that is not a valid notice. */
export function parseOutcomeNotice(fields: string[]): OutcomeNotice | undefined {
  const record: Record<string, string> = {};
  for (let index = 0; index + 1 < fields.length; index += 2) {
    record[fields[index] as string] = fields[index + 1] as string;
  }
  const parsed = OutcomeNoticeSchema.safeParse(record);
  return parsed.success ? parsed.data : undefined;
}
