import type { Clock, Store, SwitchyardConfig } from '@switchyard/contracts';
import { type FairShareLines, fairShareLines } from './fair-share-lines.ts';

/** BullMQ's largest priority (2^21); lower runs first, equal priorities run in arrival order. */
const MAX_PRIORITY = 2_097_152;

/**
 * Fair share of a busy server between teams, built on BullMQ priorities (docs/semantics.md §1).
 *
 * Each team has a line per server: its calls not yet settled there. A new call's priority is its
 * place in its own team's line divided by the team's weight, so a team with 200 calls waiting gets
 * priorities 1…200 while another team's first call gets 1 and runs next: teams take turns, whatever
 * arrived first. Every call of such a server gets a priority — BullMQ runs calls without one before
 * all prioritized calls.
 *
 * The lines (fair-share-lines.ts) are kept in the deployment's store: joining one is idempotent (a
 * resumed run re-dispatching the same call does not count twice), leaving it too (any replica may
 * settle a call), and a call nobody settled (its orchestrator gone for good) drops out at its deadline,
 * by which time it has started or expired.
 */
export class FairShare {
  private readonly lines: FairShareLines;

  constructor(
    store: Store,
    private readonly config: SwitchyardConfig,
    /** The clock the deadlines are on: the store's (ServerClock). */
    clock: Clock = { now: Date.now },
  ) {
    this.lines = fairShareLines(store, clock);
  }

  /** The BullMQ priority for a call, or undefined when the server runs calls in arrival order. */
  async enter(server: string, team: string, callId: string, deadline: number): Promise<number | undefined> {
    if (this.config.servers[server]?.fairness !== 'teams') return undefined;
    const place = await this.lines.enter(server, team, callId, deadline);
    const weight = this.config.teams[team]?.weight ?? 1;
    return Math.min(MAX_PRIORITY, Math.max(1, Math.ceil(place / weight)));
  }

  /** The call settled: it no longer holds its team back. */
  leave(server: string, team: string, callId: string): Promise<unknown> {
    if (this.config.servers[server]?.fairness !== 'teams') return Promise.resolve();
    return this.lines.leave(server, team, callId);
  }
}
