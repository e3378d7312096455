import { cancelRequests, type Store, type ToolCallCancel } from '@switchyard/contracts';

/** A queued or running call to stop: its server's queue and its deterministic job id. */
export interface CallToCancel {
  queue: string;
  id: string;
}

/**
 * Asks whichever worker runs one of the calls to abort it, and every worker to refuse the others: one
 * request per queue on the deployment's cancel channel (CancelRequests). A failed publish is reported,
 * not thrown: the calls then finish on their own, with their real outcomes.
 */
export async function publishCancels(
  store: Store,
  calls: CallToCancel[],
  reason: string,
  onError: (error: unknown) => void,
): Promise<void> {
  const requests = cancelRequests(store);
  const byQueue = new Map<string, string[]>();
  for (const { queue, id } of calls) byQueue.set(queue, [...(byQueue.get(queue) ?? []), id]);
  await Promise.all(
    [...byQueue].map(async ([queue, ids]) => {
      const request: ToolCallCancel = { queue, ids, reason };
      try {
        await requests.publish(request);
      } catch (error) {
        onError(error);
      }
    }),
  );
}
